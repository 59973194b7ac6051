//! Native FLOPs estimation must agree with TensorFlow's own: every fixture's
//! `tfprof_log` was written by TF's `tfprof_logger` (flops registry, shapes
//! completed with run_meta_0), so every float_ops value in it must equal
//! rtfprof's estimate from the GraphDef and the same RunMetadata, and
//! rtfprof must not estimate ops TF's registry knows but skipped.

use std::path::Path;

use rtfprof::inputs::{load_graph, load_op_log, load_run_meta};
use rtfprof::stats::Stats;

#[test]
fn estimates_equal_tensorflows_op_log() {
    let mut compared = 0;
    for model in ["mlp", "cnn", "cnn_b8", "while", "matmuls"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(model);
        let mut stats = Stats::new();
        stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
        stats.add_run_meta(0, &load_run_meta(&dir.join("run_meta_0")).unwrap());
        let op_log = load_op_log(&dir.join("tfprof_log")).unwrap();
        let logged: std::collections::HashMap<&str, i64> =
            op_log.log_entries.iter().filter(|e| e.float_ops != 0).map(|e| (e.name.as_str(), e.float_ops)).collect();
        for node in &stats.nodes {
            let estimate = stats.estimate_flops(node);
            match logged.get(&*node.name) {
                Some(&tf) => {
                    assert_eq!(estimate, Some(tf), "{model} {} ({})", node.name, node.op);
                    compared += 1;
                }
                // Einsum is not in TF's registry; checked below.
                None if node.op == "Einsum" => {}
                None => assert_eq!(estimate, None, "{model} {} ({}): TF logged no flops", node.name, node.op),
            }
        }
    }
    assert!(compared >= 60, "only {compared} float_ops values compared");
}

#[test]
fn estimate_flag_fills_the_float_ops_column() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cnn");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "scope".to_owned(),
            format!("--graph_path={}", dir.join("graph.pbtxt").display()),
            format!("--run_meta_path={}", dir.join("run_meta_0").display()),
            "--select=float_ops".into(),
            "--max_depth=2".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rtfprof")).args(&args).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    // Without an op log, tfprof (and rtfprof by default) count no flops.
    assert!(run(&[]).contains("_TFProfRoot (--/0 flops)"));
    let with_log = run(&[&format!("--op_log_path={}", dir.join("tfprof_log").display())]);
    let estimated = run(&["--estimate_flops"]);
    assert_eq!(estimated, with_log, "estimates reproduce TF's op log totals");
}

#[test]
fn einsum_counts_like_the_equivalent_batch_matmul() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/matmuls");
    let mut stats = Stats::new();
    stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
    stats.add_run_meta(0, &load_run_meta(&dir.join("run_meta_0")).unwrap());
    let op_log = load_op_log(&dir.join("tfprof_log")).unwrap();
    let tf_batch_matmul = op_log.log_entries.iter().find(|e| e.name == "batch_matmul").unwrap().float_ops;
    let estimate = |name: &str| stats.estimate_flops(stats.node(name).unwrap());
    // einsum("bij,bjk->bik") is the same contraction as matmul(a[3,4,5], b[3,5,6]).
    assert_eq!(estimate("einsum_bmm/Einsum"), Some(tf_batch_matmul));
    // einsum("bik->bk") sums i (4) into each of the 3x6 outputs: one add each.
    assert_eq!(estimate("einsum_sum/Einsum"), Some(3 * 6 * 4));
}

/// From a profile file, whose nodes carry tfprof's shapes instead of the
/// GraphDef's, the estimates fill in exactly what the op log had logged.
#[test]
fn estimates_from_a_profile_equal_tensorflows_op_log() {
    let mut compared = 0;
    for model in ["mlp", "cnn"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(model).join("profile");
        let profile = rtfprof::inputs::load_profile(&path, rtfprof::inputs::NodeDetail::ALL).unwrap();
        let mut stats = Stats::from_profile(profile).unwrap();
        let logged: Vec<(usize, i64)> = stats.nodes.iter().enumerate().filter(|(_, n)| n.float_ops != 0).map(|(id, n)| (id, n.float_ops)).collect();
        stats.nodes.iter_mut().for_each(|n| n.float_ops = 0);
        stats.estimate_missing_flops();
        for (id, tf) in logged {
            assert_eq!(stats.nodes[id].float_ops, tf, "{model} {}", stats.nodes[id].name);
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} float_ops values compared");
}
