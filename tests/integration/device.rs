//! `rtfprof hlo` and `rtfprof kernels` against XProf's own `hlo_stats` and
//! `kernel_stats` (`testdata/xplane/expected/`, by
//! `tools/xplane/xprof_goldens.py`), on the traces where XProf knows each
//! kernel's op, and, beyond XProf, on the command-buffer traces against
//! their twins recorded without command buffers.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{jax_gpu_trace, rtfprof, shared_traces, xprof_golden, xprof_table_rows};
use serde_json::Value;

fn table(command: &str, trace: &Path, key: &str) -> Vec<Value> {
    rtfprof([command, &format!("--xplane_path={}", trace.display())]).json()[key].as_array().unwrap().clone()
}

/// XProf's framework op of an instruction (`name:` or `name:Type`, empty
/// for none) as rtfprof names it: without the type.
fn framework_op(tf_op_name: &str) -> &str {
    tf_op_name.split_once(':').map_or(tf_op_name, |(name, _)| name)
}

/// Every row of XProf's hlo_stats, and no other, with its program,
/// category, framework op, occurrences and times to the picosecond.
fn check_hlo(fixture: &str, trace: &Path) {
    let xprof = xprof_table_rows(&xprof_golden(&format!("{fixture}.hlo_stats")));
    let ours = table("hlo", trace, "hlo_ops");
    assert_eq!(ours.len(), xprof.len(), "{fixture}: rows");
    let by_key: BTreeMap<(String, String), &Value> =
        ours.iter().map(|r| ((r["program_id"].to_string(), r["hlo_op_name"].as_str().unwrap().to_owned()), r)).collect();
    for row in &xprof {
        let key = (row["program_id"].as_str().unwrap().to_owned(), row["hlo_op_name"].as_str().unwrap().to_owned());
        let r = by_key.get(&key).unwrap_or_else(|| panic!("{fixture}: no row {key:?}"));
        assert_eq!(r["category"], row["category"], "{fixture} {key:?}");
        assert_eq!(r["framework_op"].as_str().unwrap(), framework_op(row["tf_op_name"].as_str().unwrap()), "{fixture} {key:?}");
        assert_eq!(r["occurrences"].as_f64(), row["occurrences"].as_f64(), "{fixture} {key:?}");
        for (ours, theirs) in [("total_time_us", "total_time"), ("total_self_time_us", "total_self_time")] {
            let (a, b) = (r[ours].as_f64().unwrap(), row[theirs].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{fixture} {key:?} {ours}: {a}, XProf {b}");
        }
    }
}

/// A kernel row's key, as XProf's comparator has it.
fn kernel_key(r: &serde_json::Map<String, Value>) -> String {
    let num = |k: &str| r[k].as_f64().map_or_else(|| r[k].to_string(), |v| v.to_string());
    ["kernel_name", "op_name", "block_dim", "grid_dim"]
        .iter()
        .map(|k| r[*k].as_str().unwrap().to_owned())
        .chain(["registers_per_thread", "shmem_bytes"].iter().map(|k| num(k)))
        .chain(["is_op_tensor_core_eligible", "is_kernel_using_tensor_core"].iter().map(|k| r[*k].to_string()))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Every row of XProf's kernel_stats, and no other, with its occurrences,
/// occupancy and durations to the nanosecond.
fn check_kernels(fixture: &str, trace: &Path) {
    let xprof = xprof_table_rows(&xprof_golden(&format!("{fixture}.kernel_stats")));
    let ours: Vec<serde_json::Map<String, Value>> = table("kernels", trace, "kernels").into_iter().map(|v| v.as_object().unwrap().clone()).collect();
    assert_eq!(ours.len(), xprof.len(), "{fixture}: rows");
    let by_key: BTreeMap<String, &serde_json::Map<String, Value>> = ours.iter().map(|r| (kernel_key(r), r)).collect();
    assert_eq!(by_key.len(), ours.len(), "{fixture}: keys are unique");
    for row in &xprof {
        let key = kernel_key(row);
        let r = by_key.get(&key).unwrap_or_else(|| panic!("{fixture}: no kernel {key}"));
        for k in ["occurrences", "occupancy_pct", "total_duration_us", "min_duration_us", "max_duration_us"] {
            let (a, b) = (r[k].as_f64().unwrap(), row[k].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{fixture} {key} {k}: {a}, XProf {b}");
        }
    }
}

/// The committed cuts (tools/xplane/cut_jax_gpu.sh) and, where present,
/// the whole shared traces they were cut from, then the held-out traces
/// given.
fn fixtures(cuts: &[&str], shared: &[&str], heldout: Vec<(String, std::path::PathBuf)>) -> Vec<(String, std::path::PathBuf)> {
    let cut = cuts.iter().map(|f| (f.to_string(), Some(common::testdata().join("xplane").join(f))));
    let whole = shared.iter().map(|f| (f.to_string(), jax_gpu_trace(f)));
    cut.chain(whole).filter_map(|(f, t)| Some((f, t?))).chain(heldout).collect()
}

#[test]
fn jax_gpu_tables_match_xprof_where_it_knows_the_ops() {
    let cuts = ["jax_gpu_mlp_nocb", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_gpu_cond_nocb"];
    for (fixture, trace) in fixtures(&cuts, &["jax_mlp_nocb", "flax_cnn_nocb", "jax_lstm_nocb", "jax_xfer"], common::heldout_jax_gpu_by_twin().0) {
        let fixture = fixture.as_str();
        check_hlo(fixture, &trace);
        check_kernels(fixture, &trace);
    }
}

/// TF on 8 GPUs, the older layout: kernels name their op only through the
/// `level 0` annotation, which XProf does not read (its rows have no op);
/// rtfprof names the op, so its rows summed over ops are XProf's.
#[test]
fn tf_gpu_kernels_match_xprof_summed_over_ops() {
    let trace = shared_traces().join("tf2_bert_8gpu/run/host0.xplane.pb");
    if !trace.exists() {
        return;
    }
    let xprof = xprof_table_rows(&xprof_golden("tf2_bert_8gpu.kernel_stats"));
    assert!(xprof.iter().all(|r| r["op_name"] == ""), "XProf names no op");
    let mut ours: BTreeMap<String, (f64, f64, f64, f64)> = BTreeMap::new();
    for mut r in table("kernels", &trace, "kernels").into_iter().map(|v| v.as_object().unwrap().clone()) {
        assert_ne!(r["op_name"], "", "every kernel has its op: {r:?}");
        r.insert("op_name".into(), Value::from(""));
        let e = ours.entry(kernel_key(&r)).or_insert((0.0, 0.0, f64::MAX, 0.0));
        e.0 += r["occurrences"].as_f64().unwrap();
        e.1 += r["total_duration_us"].as_f64().unwrap();
        e.2 = e.2.min(r["min_duration_us"].as_f64().unwrap());
        e.3 = e.3.max(r["max_duration_us"].as_f64().unwrap());
    }
    assert_eq!(ours.len(), xprof.len());
    for row in &xprof {
        let o = ours[&kernel_key(row)];
        let x = ["occurrences", "total_duration_us", "min_duration_us", "max_duration_us"].map(|k| row[k].as_f64().unwrap());
        for (a, b) in [o.0, o.1, o.2, o.3].into_iter().zip(x) {
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{}: {a} vs XProf {b}", kernel_key(row));
        }
    }
}

/// XProf knows the convolutions of the command-buffer CNN trace (their
/// kernels run outside the graphs, naming their own instruction).
#[test]
fn convolutions_outside_command_buffers_match_xprof() {
    for (fixture, trace) in fixtures(&["jax_gpu_cnn"], &["flax_cnn"], Vec::new()) {
        let ours = table("hlo", &trace, "hlo_ops");
        let rows = xprof_table_rows(&xprof_golden(&format!("{fixture}.hlo_stats")));
        assert!(rows.len() >= 8, "{fixture}: the convolutions");
        for row in rows {
            let name = row["hlo_op_name"].as_str().unwrap();
            let r = ours.iter().find(|r| r["hlo_op_name"] == name).unwrap_or_else(|| panic!("{fixture}: no row {name}"));
            assert_eq!(r["occurrences"].as_f64(), row["occurrences"].as_f64(), "{fixture} {name}");
            assert!((r["total_time_us"].as_f64().unwrap() - row["total_time"].as_f64().unwrap()).abs() < 1e-6, "{fixture} {name}");
        }
    }
}

#[test]
fn tpu_instructions_match_xprof() {
    let tpu = shared_traces().join("xla_tpu_inference/run/host0.xplane.pb");
    if tpu.exists() {
        check_hlo("xla_tpu_inference", &tpu);
    }
}

/// JAX on CPU runs its instructions on host threads, where XProf's
/// hlo_stats shows none; rtfprof lists them, and each ran as often as the
/// events that name it.
#[test]
fn jax_cpu_instructions_are_listed_beyond_xprof() {
    let trace = common::testdata().join("xplane/jax_jit");
    assert!(xprof_table_rows(&xprof_golden("jax_jit.hlo_stats")).is_empty(), "XProf lists none");
    let ours = table("hlo", &trace, "hlo_ops");
    assert!(ours.len() >= 5, "{} rows", ours.len());
    for r in &ours {
        assert_eq!(r["occurrences"].as_i64().unwrap() % 4, 0, "4 steps: {r}");
        assert!(r["total_self_time_us"].as_f64().unwrap() <= r["total_time_us"].as_f64().unwrap(), "{r}");
    }
}

/// Beyond XProf: inside command buffers XProf names every kernel
/// `XlaModule`; rtfprof names the instruction's op, so each op ran as many
/// kernels as in the twin recorded without command buffers (the same
/// HloProto), and each (kernel, op) as often, where the two runs compiled
/// the same kernels for the op. (Each run autotunes its convolutions and
/// can pick another cuDNN kernel of the same count: the held-out `multi`
/// did for 3 of its 6 convolutions' ops.) Durations are two runs' and are
/// not compared. Device copies are left out: in a graph they run as
/// kernels (`memcpy32_post`, `memcpy128`), on a stream as memcpys, which
/// are no kernels; and so is the kernel by which a graph picks a
/// conditional's branch (`set_case_condition`, the conditional's own),
/// where a stream copies the branch index to the host.
#[test]
fn command_buffer_kernels_name_the_ops_their_twins_name() {
    for (fixture, trace) in
        fixtures(&["jax_gpu_mlp", "jax_gpu_lstm", "jax_gpu_cond"], &["jax_mlp", "flax_cnn", "jax_lstm"], common::heldout_jax_gpu_by_twin().1)
    {
        // op -> kernel -> executions
        let count = |rows: Vec<serde_json::Map<String, Value>>| {
            let mut by: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
            let graphs_only = |name: &str| name.starts_with("memcpy") || name == "set_case_condition";
            for r in rows.into_iter().filter(|r| !graphs_only(r["kernel_name"].as_str().unwrap())) {
                let kernels = by.entry(r["op_name"].as_str().unwrap().to_owned()).or_default();
                *kernels.entry(r["kernel_name"].as_str().unwrap().to_owned()).or_default() += r["occurrences"].as_f64().unwrap();
            }
            by
        };
        let twin = count(xprof_table_rows(&xprof_golden(&format!("{fixture}_nocb.kernel_stats"))));
        let ours = count(table("kernels", &trace, "kernels").into_iter().map(|v| v.as_object().unwrap().clone()).collect());
        assert_eq!(ours.keys().collect::<Vec<_>>(), twin.keys().collect::<Vec<_>>(), "{fixture}: ops");
        let mut retuned = 0;
        for (op, kernels) in &ours {
            let sum = |k: &BTreeMap<String, f64>| k.values().sum::<f64>();
            assert_eq!(sum(kernels), sum(&twin[op]), "{fixture} {op}: kernel executions");
            if kernels.keys().eq(twin[op].keys()) {
                assert_eq!(kernels, &twin[op], "{fixture} {op}");
            } else {
                retuned += 1;
            }
        }
        assert!(retuned * 10 <= ours.len(), "{fixture}: {retuned} of {} ops ran other kernels than their twin's", ours.len());
        assert!(!ours.contains_key("XlaModule"), "{fixture}");
    }
}

/// The CSV output: a header of the JSON's keys, a line per row with the
/// same values.
#[test]
fn csv_rows_are_the_json_rows() {
    let trace = common::testdata().join("xplane/jax_gpu_mlp");
    for (command, key) in [("hlo", "hlo_ops"), ("kernels", "kernels")] {
        let json = table(command, &trace, key);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let run = rtfprof([command.into(), format!("--xplane_path={}", trace.display()), format!("--output=csv:outfile={}", out.display())]).run();
        assert!(run.success());
        let mut reader = csv::Reader::from_path(&out).unwrap();
        let headers: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        let mut sorted = headers.clone();
        sorted.sort();
        assert_eq!(sorted, json[0].as_object().unwrap().keys().cloned().collect::<Vec<_>>(), "{command}: the JSON's keys");
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), json.len());
        for (row, object) in rows.iter().zip(&json) {
            for (cell, header) in row.iter().zip(&headers) {
                let value = &object[header];
                let expected = match value {
                    Value::String(s) => s.clone(),
                    Value::Array(frames) => frames.iter().map(|f| f.as_str().unwrap()).collect::<Vec<_>>().join(" <- "),
                    other => other.to_string(),
                };
                assert_eq!(cell, expected, "{command} {header}");
            }
        }
    }
}

/// On ROCm the host's launch calls (`hipModuleLaunchKernel`,
/// `hipMemcpyDtoDAsync`) carry `hlo_op` and `program_id` as the device's
/// kernels do; XProf counts the kernels only. A JAX + TransformerEngine
/// trace from 8 MI300X (AMD-AGI/TraceLens's test data): every row equal,
/// where counting the launches doubled every occurrence count.
#[test]
fn rocm_hlo_stats_count_device_executions_only() {
    check_hlo("rocm_te_fused_attn", &common::testdata().join("xplane/rocm_te_fused_attn"));
}

/// On AMD, "uses TensorCore" is XProf's rule for the matrix cores (the
/// device plane's `device_vendor` is "AMD"): every kernel row of the ROCm
/// trace is XProf's, TensorCore column included; 7 of its 19 kernels
/// (hipBLASLt's, XLA's Triton GEMMs, ck_tile's attention) use them.
#[test]
fn rocm_kernels_match_xprof() {
    let using = xprof_table_rows(&xprof_golden("rocm_te_fused_attn.kernel_stats")).iter().filter(|r| r["is_kernel_using_tensor_core"] == true).count();
    assert_eq!(using, 7);
    check_kernels("rocm_te_fused_attn", &common::testdata().join("xplane/rocm_te_fused_attn"));
}

/// A text table cuts names past 160 characters (PyTorch's templated kernel
/// names run to thousands) and says so; JSON keeps them whole.
#[test]
fn kernels_text_cuts_long_names_json_keeps_them() {
    let trace = common::testdata().join("pytorch/gpu/cuda_graph.pt.trace.json.gz").display().to_string();
    let out = rtfprof(["kernels", "--pytorch_path", &trace]).run();
    assert!(out.success(), "{}", out.stderr_lossy());
    let text = out.stdout_str();
    assert!(text.contains("void at::native::"), "{text}");
    assert!(text.contains("names longer than 160 characters are cut"), "{text}");
    for line in text.lines().filter(|l| l.contains("at::native::")) {
        let name = line.split("  ").next().unwrap();
        assert!(name.chars().count() <= 160, "{name}");
    }
    let json = rtfprof(["kernels", "--pytorch_path", &trace]).json();
    let longest = json["kernels"].as_array().unwrap().iter().map(|k| k["kernel_name"].as_str().unwrap().len()).max().unwrap();
    assert!(longest > 1000, "{longest}");
}
