//! `rtfprof steps --pytorch_path`: the steps and step time breakdown of
//! PyTorch's TensorBoard plugin (goldens in `testdata/pytorch/tb/`, by
//! `tools/torch/tb_goldens.py`), HTA's whole-trace GPU split (goldens in
//! `testdata/pytorch/hta/`, by `tools/torch/hta_goldens.py`), and the
//! invariants of the columns no reference tool has.

use crate::common;

use std::path::PathBuf;

use serde_json::Value;

fn pytorch_dir() -> PathBuf {
    common::testdata().join("pytorch")
}

/// (golden name, trace path, golden) for each plugin golden whose trace is
/// here: the fixtures always, the shared traces where `../shared` is.
fn tb_cases() -> Vec<(String, PathBuf, Value)> {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(pytorch_dir().join("tb")).unwrap() {
        let path = entry.unwrap().path();
        let golden: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let from = golden["derived_from"].as_str().unwrap();
        let trace = match from.strip_prefix("shared/") {
            Some(rest) => common::shared_traces().join(rest.strip_prefix("traces/").unwrap()),
            None => common::testdata().join(from.strip_prefix("testdata/").unwrap()),
        };
        if !trace.exists() {
            eprintln!("skipped: {} is absent (the shared traces are not part of the repository)", trace.display());
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().trim_end_matches(".tb.json").to_owned();
        cases.push((name, trace, golden));
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(cases.len() >= 5, "the fixtures' goldens: {:?}", cases.iter().map(|c| &c.0).collect::<Vec<_>>());
    cases
}

/// A µs number of the JSON as whole ns (the JSON's µs are ns / 1000).
fn ns(v: &Value) -> i64 {
    (v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) * 1000.0).round() as i64
}

/// The plugin's step names are the N of ProfilerStep#N, and "0" for the
/// one step of a trace without steps.
fn plugin_name(step: &str) -> String {
    step.strip_prefix("ProfilerStep#").map_or_else(|| if step == "trace" { "0".to_owned() } else { step.to_owned() }, str::to_owned)
}

#[test]
fn steps_and_breakdown_equal_the_tensorboard_plugin() {
    const ROLES: [&str; 8] = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"];
    for (name, trace, golden) in tb_cases() {
        let json = common::steps_json("--pytorch_path", &trace).unwrap();
        let rows = json["steps"].as_array().unwrap();
        let theirs = golden["steps"].as_array().unwrap();
        let names: Vec<String> = rows.iter().map(|r| plugin_name(r["step"].as_str().unwrap())).collect();
        let their_names: Vec<&str> = theirs.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, their_names, "{name}: steps");
        let costs = golden["costs"].as_array().unwrap();
        // The plugin's costs are of the steps it kept (rtfprof keeps all).
        let kept = golden["kept_steps"].as_array().unwrap().len();
        assert!(kept >= 1 && kept <= rows.len(), "{name}");
        for (k, row) in rows.iter().enumerate() {
            let step = &theirs[k];
            let duration = step["end_ns"].as_i64().unwrap() - step["start_ns"].as_i64().unwrap();
            assert_eq!(ns(&row["step_time_us"]), duration, "{name} step {}: step time", names[k]);
            let parts: i64 = ROLES.iter().map(|r| ns(&row[format!("{r}_us")])).sum();
            assert_eq!(parts, duration, "{name} step {}: the roles add up to the step time", names[k]);
            if k < kept {
                for role in ROLES {
                    let key = if role == "cpu_exec" { "cpu_exec" } else { role };
                    assert_eq!(ns(&row[format!("{role}_us")]), costs[k][key].as_i64().unwrap(), "{name} step {}: {role}", names[k]);
                }
                assert_eq!(duration, costs[k]["total"].as_i64().unwrap(), "{name} step {}", names[k]);
            }
        }
        eprintln!("{name}: {} steps equal the plugin's", rows.len());
    }
}

/// The whole-trace split equals HTA 0.5.0's, with its rounding; the exact
/// numbers beside it add up.
#[test]
fn gpu_time_equals_hta() {
    let mut cases: Vec<(PathBuf, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(pytorch_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".pt.trace.json.gz").filter(|s| s.starts_with("h200_")) {
            cases.push((pytorch_dir().join(&name), pytorch_dir().join(format!("hta/{stem}.hta.json"))));
        }
    }
    assert!(cases.len() >= 2);
    // Cut from published traces: epoch times in decimal µs.
    for entry in std::fs::read_dir(pytorch_dir().join("published")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".pt.trace.json.gz") {
            cases.push((pytorch_dir().join("published").join(&name), pytorch_dir().join(format!("hta/published.{stem}.hta.json"))));
        }
    }
    if let Some(dir) = common::shared_trace_dir("torch_h200") {
        for model in ["torch_resnet18", "torch_tx"] {
            let trace =
                std::fs::read_dir(dir.join(model)).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".pt.trace.json.gz")).unwrap();
            cases.push((trace, pytorch_dir().join(format!("hta/shared.{model}.hta.json"))));
        }
    }
    for (trace, golden) in cases {
        let golden: Value = serde_json::from_str(&std::fs::read_to_string(&golden).unwrap()).unwrap();
        let json = common::steps_json("--pytorch_path", &trace).unwrap();
        let gpu_time = json["gpu_time"].as_array().unwrap();
        assert_eq!(gpu_time.len(), 1, "{}: one GPU", trace.display());
        let ours = &gpu_time[0];
        let theirs = &golden["temporal_breakdown"][0];
        for (key, their_key) in
            [("compute_us", "compute_time(us)"), ("non_compute_us", "non_compute_time(us)"), ("idle_us", "idle_time(us)"), ("span_us", "kernel_time(us)")]
        {
            assert_eq!(ours[key].as_f64(), theirs[their_key].as_f64(), "{}: {key}", trace.display());
        }
        for (key, category) in [("idle_host_wait_us", "host_wait"), ("idle_kernel_wait_us", "kernel_wait"), ("idle_other_us", "other")] {
            let sum: f64 = golden["idle_time_breakdown"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["idle_category"] == category)
                .map(|r| r["idle_time"].as_f64().unwrap())
                .sum();
            assert_eq!(ours[key].as_f64(), Some(sum), "{}: {key}", trace.display());
        }
        let exact = &ours["exact"];
        let parts = ns(&exact["compute_us"]) + ns(&exact["non_compute_us"]) + ns(&exact["idle_us"]);
        assert!((parts - ns(&exact["span_us"])).abs() <= 2, "{}: {exact}", trace.display());
    }
}

/// Columns no reference tool gives: the GPU's split adds up to the step
/// time, kernel kinds to at least the busy time; the CPU span is
/// never longer than the step, and the same rows come out of the trace cut
/// to two steps as out of the whole shared trace.
#[test]
fn gpu_columns_add_up() {
    const KINDS: [&str; 8] = ["gemm", "convolution", "attention", "elementwise", "reduction", "communication", "memory", "other"];
    for model in ["resnet18", "tx"] {
        let trace = pytorch_dir().join(format!("h200_{model}.steps2-3.pt.trace.json.gz"));
        let json = common::steps_json("--pytorch_path", &trace).unwrap();
        let rows = json["steps"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        for row in rows {
            let step = ns(&row["step_time_us"]);
            let split = ns(&row["gpu_compute_us"]) + ns(&row["gpu_non_compute_us"]) + ns(&row["gpu_idle_us"]);
            assert_eq!(split, step, "{model}: {row}");
            let kinds: i64 = KINDS.iter().map(|k| ns(&row[format!("{k}_kernels_us")])).sum();
            let busy = ns(&row["gpu_compute_us"]) + ns(&row["gpu_non_compute_us"]);
            // Each event counts its own time: where streams overlap, more
            // than the busy time.
            assert!(kinds + KINDS.len() as i64 >= busy, "{model}: kinds {kinds} vs busy {busy}");
            assert!(ns(&row["cpu_step_us"]) <= step);
            assert!(row["kernels"].as_u64().unwrap() > 100, "{model}: {row}");
            // What the GPU did is the plugin's kernel, memcpy and memset.
            let plugin_busy = ns(&row["kernel_us"]) + ns(&row["memcpy_us"]) + ns(&row["memset_us"]) + ns(&row["communication_us"]);
            assert_eq!(plugin_busy, busy, "{model}: {row}");
        }
        assert!(rows.iter().any(|r| r["gemm_kernels_us"].as_f64().unwrap() > 0.0), "{model}: GEMMs");
        if let Some(dir) = common::shared_trace_dir("torch_h200") {
            let whole = std::fs::read_dir(dir.join(format!("torch_{model}")))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().ends_with(".gz"))
                .unwrap();
            let whole = common::steps_json("--pytorch_path", &whole).unwrap();
            for row in rows {
                let same = whole["steps"].as_array().unwrap().iter().find(|r| r["step"] == row["step"]).unwrap();
                assert_eq!(same, row, "{model}: the cut keeps the step's numbers");
            }
        }
    }
}

/// Text and CSV carry the same rows; a trace without GPU work has no GPU
/// columns; a directory of traces is a rank each.
#[test]
fn outputs_and_ranks() {
    let trace = pytorch_dir().join("h200_tx.steps2-3.pt.trace.json.gz");
    let text = common::rtfprof(["steps".into(), "--pytorch_path".into(), trace.display().to_string()]).stdout();
    for needle in ["ProfilerStep#2", "ProfilerStep#3", "CPU Exec", "Runtime", "GPU idle", "GEMM", "Attention", "HTA 0.5.0"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("steps.csv");
    let out = common::rtfprof(["steps".into(), "--pytorch_path".into(), trace.display().to_string(), format!("--output=csv:outfile={}", csv.display())]).run();
    assert!(out.success());
    let csv = std::fs::read_to_string(&csv).unwrap();
    let json = common::steps_json("--pytorch_path", &trace).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let keys: Vec<String> = json["steps"][0].as_object().unwrap().keys().cloned().collect();
    assert_eq!(header.len(), keys.len());
    assert!(keys.iter().all(|k| header.contains(&k.as_str())), "{header:?} vs {keys:?}");
    assert_eq!(csv.lines().count(), 3);

    let cpu = common::steps_json("--pytorch_path", &pytorch_dir().join("threads_memory.pt.trace.json")).unwrap();
    let row = &cpu["steps"][0];
    assert_eq!(row["step"], "trace");
    assert!(row["gpu_idle_us"].is_null() && row["device"].is_null() && row["kernels"].is_null(), "{row}");
    assert!(cpu["gpu_time"].as_array().unwrap().is_empty());

    let ranks = tempfile::tempdir().unwrap();
    for r in ["rank0", "rank1"] {
        std::fs::copy(&trace, ranks.path().join(format!("{r}.pt.trace.json.gz"))).unwrap();
    }
    let json = common::steps_json("--pytorch_path", ranks.path()).unwrap();
    let rows = json["steps"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let rank_names: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["rank"].as_str().unwrap()).collect();
    assert_eq!(rank_names.len(), 2, "{rank_names:?}");
    assert_eq!(json["gpu_time"].as_array().unwrap().len(), 2);
}

/// A trace of launches and GPU work with no CPU op (TraceLens' MI210
/// `gpu_only_trace`, cut by `tools/torch/cut_published.sh`) is one step,
/// `trace`, spanning its events; its kernels are all there.
#[test]
fn trace_without_cpu_ops_is_one_step_of_its_gpu_work() {
    let dir = pytorch_dir().join("published");
    let json = common::steps_json("--pytorch_path", &dir.join("mi210_gpu_only.json.gz")).unwrap();
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("mi210_gpu_only.launch.json")).unwrap()).unwrap();
    let steps = json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0]["step"], "trace");
    assert_eq!(ns(&steps[0]["kernel_us"]), golden["gpu_ns"].as_i64().unwrap());
    assert_eq!(steps[0]["kernels"], 562);
    assert!(ns(&steps[0]["step_time_us"]) >= ns(&steps[0]["kernel_us"]));
}

/// `--window_steps` and `--window_mb` read a trace a window of steps at a
/// time (the equality of every number is tested in the library, on every
/// trace of the test data); `steps`, `kernels` and the views print what they print for
/// the trace read whole, and a directory of ranks is read so too.
#[test]
fn steps_read_in_windows_print_the_same() {
    let gz = pytorch_dir().join("h200_tx.steps2-3.pt.trace.json.gz");
    let whole = common::rtfprof(["steps".to_owned(), format!("--pytorch_path={}", gz.display())]).stdout();
    assert!(whole.contains("ProfilerStep#3"), "{whole}");
    for flag in ["--window_steps=1", "--window_mb=1", "--window_steps=0"] {
        let windowed = common::rtfprof(["steps".to_owned(), format!("--pytorch_path={}", gz.display()), flag.to_owned()]).stdout();
        assert!(windowed == whole, "{flag}: {}", common::first_difference(&whole, &windowed, ["whole", flag]));
    }
    let kernels = common::rtfprof(["kernels".to_owned(), format!("--pytorch_path={}", gz.display())]).stdout();
    let windowed = common::rtfprof(["kernels".to_owned(), format!("--pytorch_path={}", gz.display()), "--window_steps=1".to_owned()]).stdout();
    assert!(kernels.contains("sm90") && windowed == kernels, "{}", common::first_difference(&kernels, &windowed, ["whole", "windowed"]));
    // The views: the node model read in windows is the whole trace's.
    for (view, shows) in [("scope", "aten::"), ("op", "AddmmBackward0"), ("code", "_TFProfRoot")] {
        let args =
            |extra: &str| [view.to_owned(), format!("--pytorch_path={}", gz.display()), "--select=micros,occurrence,device".to_owned(), extra.to_owned()];
        let whole = common::rtfprof(args("--window_mb=0")).stdout();
        let windowed = common::rtfprof(args("--window_steps=1")).stdout();
        assert!(whole.contains(shows) && windowed == whole, "{view}: {}", common::first_difference(&whole, &windowed, ["whole", "windowed"]));
    }
    // `memory`, each step replayed as its window is read (the JSON: every
    // curve point; and one step asked for).
    let tmp = tempfile::tempdir().unwrap();
    for step in ["--step=-1", "--step=3"] {
        let json = |flag: &str| {
            let out = tmp.path().join(format!("memory{flag}{step}.json"));
            let args = ["memory".to_owned(), format!("--pytorch_path={}", gz.display()), format!("--output=json:outfile={}", out.display()), step.to_owned()];
            common::rtfprof(args.into_iter().chain([flag.to_owned()])).stdout();
            std::fs::read_to_string(out).unwrap()
        };
        let (whole, windowed) = (json("--window_mb=0"), json("--window_steps=1"));
        assert!(whole.contains("cuda:0") && windowed == whole, "{step}: {}", common::first_difference(&whole, &windowed, ["whole", "windowed"]));
    }
    // `partial`, each window imported and summarized as a rank at once.
    let written = |flag: &str| {
        let out = tmp.path().join(format!("p{flag}.partial"));
        common::rtfprof(["partial".to_owned(), format!("--pytorch_path={}", gz.display()), "-o".to_owned(), out.display().to_string(), flag.to_owned()])
            .stdout();
        std::fs::read(out).unwrap()
    };
    assert!(written("--window_mb=0") == written("--window_steps=1"), "partial: whole and windowed differ");
    // `ranks`, each rank's trace read in windows (the JSON: every digit).
    for dir in ["gloo3", "ranks16"] {
        let dir = pytorch_dir().join(dir);
        let tmp = tempfile::tempdir().unwrap();
        let json = |flag: &str| {
            let out = tmp.path().join(format!("ranks{flag}.json"));
            common::rtfprof([
                "ranks".to_owned(),
                format!("--pytorch_path={}", dir.display()),
                format!("--output=json:outfile={}", out.display()),
                flag.to_owned(),
            ])
            .stdout();
            std::fs::read_to_string(out).unwrap()
        };
        let (whole, windowed) = (json("--window_mb=0"), json("--window_steps=1"));
        assert!(whole.contains("\"steps\"") && windowed == whole, "{}", common::first_difference(&whole, &windowed, ["whole", "windowed"]));
    }
    let ranks = pytorch_dir().join("gloo3");
    let whole = common::rtfprof(["steps".to_owned(), format!("--pytorch_path={}", ranks.display())]).stdout();
    let windowed = common::rtfprof(["steps".to_owned(), format!("--pytorch_path={}", ranks.display()), "--window_steps=1".to_owned()]).stdout();
    assert!(windowed == whole, "{}", common::first_difference(&whole, &windowed, ["whole", "windowed"]));
}
