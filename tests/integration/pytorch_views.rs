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

use crate::common;

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
    common::rtfprof(&args).run().ok();
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
            assert!(
                ["forward", "backward", "optimizer"].contains(&key) || key.starts_with("Optimizer.") || key.contains('#'),
                "{}: torch's {key} is not an op type",
                trace.display()
            );
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
    let run = common::rtfprof(&args).run();
    let out = run.stdout_lossy();
    assert!(run.success(), "{}", run.stderr_lossy());
    for scope in [
        "forward/ResNet_0/Sequential_0/BasicBlock_0/Conv2d_1/aten::conv2d",
        "backward/ResNet_0/Sequential_0/BasicBlock_0/Conv2d_1/autograd::engine::evaluate_function: ConvolutionBackward0",
        "optimizer",
    ] {
        assert!(out.lines().any(|l| l.trim_start().starts_with(&format!("{scope} ("))), "{scope} missing:\n{out}");
    }
}

/// Every command takes a PyTorch trace: two steps diff, jobs summarize, a
/// directory of ranks loads one job a rank, the graph view is refused.
#[test]
fn commands_take_pytorch_traces() {
    let trace = common::testdata().join("pytorch/schedule.pt.trace.json.gz");
    let flag = format!("--pytorch_path={}", trace.display());
    let run = common::rtfprof(["diff".into(), flag.clone(), "--left_step=2".into(), "--right_step=3".into(), "--delta=0".into()]).run();
    let (out, err, ok) = (run.stdout_lossy(), run.stderr_lossy(), run.success());
    assert!(ok && out.contains("step 2 (left)") && out.contains("relative difference in micros"), "{out}{err}");
    let run =
        common::rtfprof(["jobs".into(), format!("--job=a={}", trace.display()), format!("--job=b={}", common::testdata().join("mlp/profile").display())]).run();
    let (out, err, ok) = (run.stdout_lossy(), run.stderr_lossy(), run.success());
    assert!(ok && out.contains("job a:") && out.contains("job b:"), "{out}{err}");
    let ranks = tempfile::tempdir().unwrap();
    for rank in ["rank0", "rank1"] {
        std::fs::copy(&trace, ranks.path().join(format!("{rank}.pt.trace.json.gz"))).unwrap();
    }
    std::fs::write(ranks.path().join("notes.json"), "{\"not\": \"a trace\"}").unwrap();
    let run = common::rtfprof(["scope".into(), format!("--pytorch_path={}", ranks.path().display()), "--max_depth=2".into()]).run();
    let (out, err, ok) = (run.stdout_lossy(), run.stderr_lossy(), run.success());
    assert!(ok && out.contains("job rank0:") && out.contains("\n  rank1 (") && !out.contains("notes"), "{out}{err}");
    let run = common::rtfprof(["graph".into(), flag.clone()]).run();
    let (err, ok) = (run.stderr_lossy(), run.success());
    assert!(!ok && err.contains("no graph edges"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    for (command, output) in [("scope", "timeline:outfile=t.json"), ("report", "html:outfile=r.html"), ("code", "pprof:outfile=p.pb.gz")] {
        let output = format!("--output={}", output.replace("outfile=", &format!("outfile={}/", dir.path().display())));
        let run = common::rtfprof([command.into(), flag.clone(), output]).run();
        let (out, err, ok) = (run.stdout_lossy(), run.stderr_lossy(), run.success());
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
    let run = common::rtfprof(["memory".into(), format!("--pytorch_path={}", dir.display()), format!("--output=json:outfile={}", json.display())]).run();
    let (err, ok) = (run.stderr_lossy(), run.success());
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
    let run = common::rtfprof(["code", "--pytorch_path", trace.to_str().unwrap()]).run();
    let (stdout, stderr, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("this PyTorch trace has no Python call stacks") && stderr.contains("with_stack=True"), "{stderr}");
}

/// A trace file's JSON (plain or gzipped), parsed here, apart from
/// rtfprof's reader.
fn trace_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut text).unwrap();
    } else {
        text = bytes;
    }
    serde_json::from_slice(&text).unwrap()
}

/// `x,y,z` of a `grid` or `block` arg.
fn dims(v: &Value) -> String {
    v.as_array().unwrap().iter().map(|d| d.as_u64().unwrap().to_string()).collect::<Vec<_>>().join(",")
}

/// `rtfprof kernels` on the H200 traces, against their own kernel events
/// read here from the JSON: the rows add up to the events (time, count by
/// kernel name, and count, time, min and max by kernel and launch
/// configuration: grid, block, registers, shared memory); a sampled event
/// has a row of its kernel, configuration and the op its `External id`
/// names (torch's link); the rows are longest first, their occupancy one
/// of their events', and XProf's TensorCore rule marks the kernels it names.
#[test]
fn kernels_add_up_to_the_traces_kernel_events() {
    use std::collections::{BTreeMap, HashMap};
    for name in ["h200_resnet18", "h200_tx"] {
        let path = common::testdata().join(format!("pytorch/{name}.steps2-3.pt.trace.json.gz"));
        let json = trace_json(&path);
        let events = json["traceEvents"].as_array().unwrap();
        let ns = |e: &Value| (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
        let kernels: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X" && e["cat"] == "kernel").collect();
        assert!(kernels.len() > 400, "{name}: {} kernels", kernels.len());
        assert!(kernels.iter().all(|e| ns(e) > 0), "{name}: a kernel of no duration (XProf leaves them out)");
        let ops: HashMap<u64, &str> = events
            .iter()
            .filter(|e| e["cat"] == "cpu_op" || e["cat"] == "user_annotation")
            .filter_map(|e| Some((e["args"]["External id"].as_u64()?, e["name"].as_str()?)))
            .collect();

        let rows = common::rtfprof(["kernels".to_owned(), format!("--pytorch_path={}", path.display())]).json()["kernels"].as_array().unwrap().clone();
        let row_ns = |r: &Value, k: &str| (r[k].as_f64().unwrap() * 1000.0).round() as i64;
        assert_eq!(rows.iter().map(|r| row_ns(r, "total_duration_us")).sum::<i64>(), kernels.iter().map(|e| ns(e)).sum::<i64>(), "{name}: total");
        assert!(rows.windows(2).all(|w| row_ns(&w[0], "total_duration_us") >= row_ns(&w[1], "total_duration_us")), "{name}: longest first");

        let mut by_name: BTreeMap<&str, i64> = BTreeMap::new();
        for e in &kernels {
            *by_name.entry(e["name"].as_str().unwrap()).or_default() += 1;
        }
        let mut rows_by_name: BTreeMap<&str, i64> = BTreeMap::new();
        for r in &rows {
            *rows_by_name.entry(r["kernel_name"].as_str().unwrap()).or_default() += r["occurrences"].as_i64().unwrap();
        }
        assert_eq!(rows_by_name, by_name, "{name}: count by kernel name");

        // (name, grid, block, registers, shared memory) -> (count, total, min, max).
        type Sums = BTreeMap<(String, String, String, u64, u64), (i64, i64, i64, i64)>;
        fn add(sums: &mut Sums, key: (String, String, String, u64, u64), (n, total, min, max): (i64, i64, i64, i64)) {
            let s = sums.entry(key).or_insert((0, 0, i64::MAX, i64::MIN));
            *s = (s.0 + n, s.1 + total, s.2.min(min), s.3.max(max));
        }
        let mut expected = Sums::new();
        for e in &kernels {
            let a = &e["args"];
            let key = (
                e["name"].as_str().unwrap().to_owned(),
                dims(&a["grid"]),
                dims(&a["block"]),
                a["registers per thread"].as_u64().unwrap(),
                a["shared memory"].as_u64().unwrap(),
            );
            add(&mut expected, key, (1, ns(e), ns(e), ns(e)));
        }
        let mut ours = Sums::new();
        for r in &rows {
            let text = |k: &str| r[k].as_str().unwrap().to_owned();
            let key =
                (text("kernel_name"), text("grid_dim"), text("block_dim"), r["registers_per_thread"].as_u64().unwrap(), r["shmem_bytes"].as_u64().unwrap());
            let sums = (r["occurrences"].as_i64().unwrap(), row_ns(r, "total_duration_us"), row_ns(r, "min_duration_us"), row_ns(r, "max_duration_us"));
            add(&mut ours, key, sums);
        }
        assert_eq!(ours, expected, "{name}: by kernel and launch configuration");

        for e in kernels.iter().step_by(7) {
            let a = &e["args"];
            let op = ops[&a["External id"].as_u64().unwrap()];
            let row = rows.iter().find(|r| {
                r["kernel_name"] == e["name"]
                    && r["op_name"] == op
                    && r["grid_dim"] == dims(&a["grid"]).as_str()
                    && r["block_dim"] == dims(&a["block"]).as_str()
                    && r["registers_per_thread"] == a["registers per thread"]
                    && r["shmem_bytes"] == a["shared memory"]
            });
            let row = row.unwrap_or_else(|| panic!("{name}: no row for {e} of {op}"));
            assert!(row_ns(row, "min_duration_us") <= ns(e) && ns(e) <= row_ns(row, "max_duration_us"), "{name}: {e} in {row}");
            let occupancies: Vec<&Value> =
                kernels.iter().filter(|k| k["name"] == e["name"] && k["args"]["grid"] == a["grid"]).map(|k| &k["args"]["est. achieved occupancy %"]).collect();
            assert!(occupancies.iter().any(|&o| o.as_f64() == row["occupancy_pct"].as_f64()), "{name}: occupancy of {row}");
        }

        for r in &rows {
            let kernel = r["kernel_name"].as_str().unwrap();
            if kernel.contains("xmma_gemm") || kernel.contains("s1688") {
                assert_eq!((&r["is_kernel_using_tensor_core"], &r["is_op_tensor_core_eligible"]), (&Value::Bool(true), &Value::Bool(true)), "{name}: {r}");
            }
            if kernel.contains("elementwise_kernel") {
                assert_eq!(r["is_kernel_using_tensor_core"], false, "{name}: {r}");
            }
        }
        if name == "h200_resnet18" {
            assert!(rows.iter().any(|r| r["is_kernel_using_tensor_core"] == true), "{name}: no TensorCore kernel");
        }
    }
}
