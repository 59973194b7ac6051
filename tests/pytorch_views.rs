//! PyTorch traces in the node model (`--pytorch_path`), against PyTorch's
//! own numbers: the op view's own CPU and GPU time of each aten op and
//! runtime call, summed over the steps, is `prof.key_averages()`'s
//! `self_cpu_time_total` and `self_device_time_total` for it, up to the
//! rounding of each (node, step) total to whole microseconds (the node
//! model's unit). Torch's counts differ where it merges a lone same-named
//! child into its parent (`_remove_dup_nodes`): the times do not.
//!
//! The expected values are torch 2.11's, recorded with the traces (the
//! fixtures by tools/torch/gen_key_averages.py; the H200 traces'
//! `key_averages.json` in ../shared/traces when present).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

fn op_view(trace: &Path) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("op.json");
    let args = [
        "op".to_owned(),
        format!("--pytorch_path={}", trace.display()),
        "--select=micros,occurrence".to_owned(),
        "--max_depth=1000000".to_owned(),
        format!("--output=json:outfile={}", out.display()),
    ];
    let run = common::run_rtfprof(&args, "", None);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// Per op type: (own cpu µs summed over steps, own accelerator µs, how
/// many (node, step) totals were rounded).
fn op_sums(view: &Value) -> Vec<(String, f64, f64, f64)> {
    let steps = view["steps"].as_array().map_or(1, Vec::len).max(1);
    view["root"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let sum = |metric: &str| match row["per_step"]["metrics"][metric]["values"].as_array() {
                Some(values) => values.iter().map(|v| v.as_f64().unwrap()).sum(),
                // One step: the own values are the step's.
                None => row["own"][metric].as_f64().unwrap(),
            };
            let totals = row["graph_nodes"].as_f64().unwrap() * steps as f64;
            (row["name"].as_str().unwrap().to_owned(), sum("cpu_micros"), sum("accelerator_micros"), totals)
        })
        .collect()
}

/// torch's rows of CPU events that are ops or runtime calls (not
/// annotations, which rtfprof makes scopes).
fn torch_cpu_rows(rows: &[Value]) -> Vec<&Value> {
    rows.iter()
        .filter(|r| r.get("device_type").and_then(Value::as_str).unwrap_or("CPU") == "CPU")
        .filter(|r| !r.get("is_user_annotation").and_then(Value::as_bool).unwrap_or(false))
        .filter(|r| r["key"] != "ProfilerStep*" && r["key"] != "[memory]")
        // (The shared traces' rows name no device type: device rows have no CPU time.)
        .filter(|r| r["cpu_time_total"].as_f64() != Some(0.0))
        .collect()
}

fn check(trace: &Path, rows: &[Value]) -> usize {
    let ours = op_sums(&op_view(trace));
    let mut compared = 0;
    for row in torch_cpu_rows(rows) {
        let key = row["key"].as_str().unwrap();
        // (Annotations in the shared traces have no is_user_annotation field:
        // they are known by having no op of that name.)
        let Some((_, cpu, accelerator, totals)) = ours.iter().find(|(name, ..)| name == key) else {
            assert!(["forward", "backward", "optimizer"].contains(&key) || key.starts_with("Optimizer.") || key.contains('#'), "{}: torch's {key} is not an op type", trace.display());
            continue;
        };
        let tolerance = 0.5 * totals + 1e-6;
        let (self_cpu, self_device) = (row["self_cpu_time_total"].as_f64().unwrap(), row["self_device_time_total"].as_f64().unwrap());
        assert!((cpu - self_cpu).abs() <= tolerance, "{}: {key}: own cpu {cpu} µs, torch's self cpu {self_cpu} µs (± {tolerance})", trace.display());
        assert!(
            (accelerator - self_device).abs() <= tolerance,
            "{}: {key}: own accelerator {accelerator} µs, torch's self device {self_device} µs (± {tolerance})",
            trace.display()
        );
        compared += 1;
    }
    compared
}

#[test]
fn fixtures_ops_have_torchs_self_times() {
    let dir = common::testdata().join("pytorch");
    let mut compared = 0;
    for case in ["schedule", "shapes_merges", "threads_memory"] {
        let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{case}.key_averages.json"))).unwrap()).unwrap();
        let rows = expected["cases"].as_array().unwrap().iter().find(|c| c["group_by_input_shape"] == false).unwrap()["rows"].as_array().unwrap();
        let trace = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(&format!("{case}.pt.trace.json")))
            .unwrap();
        compared += check(&trace, rows);
    }
    assert!(compared >= 30, "{compared} rows compared");
}

#[test]
fn h200_traces_ops_have_torchs_self_times() {
    for name in ["torch_resnet18", "torch_tx"] {
        let Some(dir) = common::shared_trace_dir(&format!("torch_h200/{name}")) else { return };
        let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(dir.join("key_averages.json")).unwrap()).unwrap();
        let trace: PathBuf = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_str().unwrap().ends_with(".pt.trace.json.gz")).unwrap();
        let compared = check(&trace, &rows);
        assert!(compared >= 60, "{name}: {compared} rows compared");
        // Every kernel, copy and set is some op's, or unattributed: the GPU
        // time adds up to torch's device rows (annotations' spans aside).
        let ours: f64 = op_sums(&op_view(&trace)).iter().map(|(_, _, accelerator, _)| accelerator).sum();
        // (A record_function's GPU row has the name of its CPU row.)
        let cpu_keys: Vec<&Value> = rows.iter().filter(|r| r["cpu_time_total"].as_f64() != Some(0.0)).map(|r| &r["key"]).collect();
        let torch: f64 = rows
            .iter()
            .filter(|r| r["cpu_time_total"].as_f64() == Some(0.0) && !cpu_keys.contains(&&r["key"]))
            .map(|r| r["self_device_time_total"].as_f64().unwrap())
            .sum();
        assert!((ours - torch).abs() <= 0.005 * torch, "{name}: GPU time {ours} µs, torch's device rows {torch} µs");
    }
}

/// The scope view puts each layer's forward and backward ops under its
/// modules, and the GPU time of the kernels each op launched on it.
#[test]
fn scopes_are_modules_with_their_gpu_time() {
    let Some(dir) = common::shared_trace_dir("torch_h200/torch_resnet18") else { return };
    let args = [
        "scope".to_owned(),
        format!("--pytorch_path={}", dir.display()),
        "--select=accelerator_micros".to_owned(),
        "--max_depth=100".to_owned(),
        "--step=1".to_owned(),
    ];
    let run = common::run_rtfprof(&args, "", None);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for scope in ["forward/ResNet_0/Sequential_0/BasicBlock_0/Conv2d_1/aten::conv2d", "backward/ResNet_0/Sequential_0/BasicBlock_0/Conv2d_1/autograd::engine::evaluate_function: ConvolutionBackward0", "optimizer"] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(&format!("{scope} ("))), "{scope} missing:\n{out}");
    }
}

fn rtfprof(args: &[String]) -> (String, String, bool) {
    let run = common::run_rtfprof(args, "", None);
    (String::from_utf8_lossy(&run.stdout).into_owned(), String::from_utf8_lossy(&run.stderr).into_owned(), run.status.success())
}

/// Every command takes a PyTorch trace: two steps diff, jobs summarize, a
/// directory of ranks loads one job a rank, the graph view is refused.
#[test]
fn commands_take_pytorch_traces() {
    let trace = common::testdata().join("pytorch/schedule.pt.trace.json.gz");
    let flag = format!("--pytorch_path={}", trace.display());
    let (out, err, ok) = rtfprof(&["diff".into(), flag.clone(), "--left_step=2".into(), "--right_step=3".into(), "--delta=0".into()]);
    assert!(ok && out.contains("step 2 (left)") && out.contains("relative difference in micros"), "{out}{err}");
    let (out, err, ok) = rtfprof(&["jobs".into(), format!("--job=a={}", trace.display()), format!("--job=b={}", common::testdata().join("mlp/profile").display())]);
    assert!(ok && out.contains("job a:") && out.contains("job b:"), "{out}{err}");
    let ranks = tempfile::tempdir().unwrap();
    for rank in ["rank0", "rank1"] {
        std::fs::copy(&trace, ranks.path().join(format!("{rank}.pt.trace.json.gz"))).unwrap();
    }
    std::fs::write(ranks.path().join("notes.json"), "{\"not\": \"a trace\"}").unwrap();
    let (out, err, ok) = rtfprof(&["scope".into(), format!("--pytorch_path={}", ranks.path().display()), "--max_depth=2".into()]);
    assert!(ok && out.contains("job rank0:") && out.contains("\n  rank1 (") && !out.contains("notes"), "{out}{err}");
    let (_, err, ok) = rtfprof(&["graph".into(), flag.clone()]);
    assert!(!ok && err.contains("no graph edges"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    for (command, output) in [("scope", "timeline:outfile=t.json"), ("report", "html:outfile=r.html"), ("code", "pprof:outfile=p.pb.gz")] {
        let output = format!("--output={}", output.replace("outfile=", &format!("outfile={}/", dir.path().display())));
        let (out, err, ok) = rtfprof(&[command.into(), flag.clone(), output]);
        assert!(ok, "{command}: {out}{err}");
    }
}

/// At each step's peak of a GPU's memory, what ops hold and what was
/// allocated before the step ("(untracked)": weights, optimizer state) add
/// up to the allocator's bytes in use, and ops hold most of a training
/// step's peak (frees are matched to their allocations by address).
#[test]
fn memory_at_the_peak_is_held_by_ops() {
    let Some(dir) = common::shared_trace_dir("torch_h200/torch_tx") else { return };
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("memory.json");
    let (_, err, ok) = rtfprof(&["memory".into(), format!("--pytorch_path={}", dir.display()), format!("--output=json:outfile={}", json.display())]);
    assert!(ok, "{err}");
    let memory: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let mut checked = 0;
    for step in memory["steps"].as_array().unwrap() {
        let allocator = &step["allocators"]["cuda:0"];
        let live = allocator["live_at_peak"].as_object().unwrap();
        let all: i64 = live.values().map(|b| b.as_i64().unwrap()).sum();
        let peak = allocator["peak_bytes"].as_i64().unwrap();
        assert_eq!(all, peak, "step {}", step["step"]);
        let untracked = live.get("(untracked)").and_then(Value::as_i64).unwrap_or(0);
        assert!(untracked < peak / 2 && live.keys().any(|k| k.starts_with("forward/TransformerEncoder_0/")), "step {}: {live:?}", step["step"]);
        checked += 1;
    }
    assert_eq!(checked, 4);
}

/// A PyTorch trace recorded without `with_stack=True` has no code view:
/// the one line says so in PyTorch's terms (it once spoke of XPlane).
#[test]
fn code_view_of_a_trace_without_stacks_says_how_to_record_them() {
    let trace = common::testdata().join("pytorch/published/hta_alexnet.json.gz");
    let (stdout, stderr, code) = common::rtfprof_code(&["code", "--pytorch_path", trace.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("this PyTorch trace has no Python call stacks") && stderr.contains("with_stack=True"), "{stderr}");
}
