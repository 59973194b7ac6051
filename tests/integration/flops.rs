//! Native FLOPs estimation must agree with TensorFlow's own: every fixture's
//! `tfprof_log` was written by TF's `tfprof_logger` (flops registry, shapes
//! completed with run_meta_0), so every float_ops value in it must equal
//! rtfprof's estimate from the GraphDef and the same RunMetadata, and
//! rtfprof must not estimate ops TF's registry knows but skipped. Every op
//! type in the registry (`testdata/flops/`, from `tools/gen_flops.py`) has
//! an estimator, equal to TF's float_ops on cases built for it.

use rtfprof::inputs::{load_graph, load_op_log, load_run_meta};
use rtfprof::stats::Stats;

use crate::common;

use common::{rtfprof, testdata};

#[test]
fn estimates_equal_tensorflows_op_log() {
    let mut compared = 0;
    for model in ["mlp", "cnn", "cnn_b8", "while", "matmuls"] {
        let dir = testdata().join(model);
        let mut stats = Stats::new();
        stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
        stats.add_run_meta(0, &load_run_meta(&dir.join("run_meta_0")).unwrap());
        let op_log = load_op_log(&dir.join("tfprof_log")).unwrap();
        let logged: std::collections::HashMap<&str, i64> =
            op_log.log_entries.iter().filter(|e| e.float_ops != 0).map(|e| (e.name.as_str(), e.float_ops)).collect();
        for node in &stats.nodes {
            let estimate = stats.estimate_flops(node, false);
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
    let dir = testdata().join("cnn");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "scope".to_owned(),
            format!("--graph_path={}", dir.join("graph.pbtxt").display()),
            format!("--run_meta_path={}", dir.join("run_meta_0").display()),
            "--select=float_ops".into(),
            "--max_depth=2".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        rtfprof(&args).stdout()
    };
    // Without an op log, tfprof (and rtfprof by default) count no flops.
    assert!(run(&[]).contains("_TFProfRoot (--/0 flops)"));
    let with_log = run(&[&format!("--op_log_path={}", dir.join("tfprof_log").display())]);
    let estimated = run(&["--estimate_flops"]);
    assert_eq!(estimated, with_log, "estimates reproduce TF's op log totals");
}

#[test]
fn einsum_counts_like_the_equivalent_batch_matmul() {
    let dir = testdata().join("matmuls");
    let mut stats = Stats::new();
    stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
    stats.add_run_meta(0, &load_run_meta(&dir.join("run_meta_0")).unwrap());
    let op_log = load_op_log(&dir.join("tfprof_log")).unwrap();
    let tf_batch_matmul = op_log.log_entries.iter().find(|e| e.name == "batch_matmul").unwrap().float_ops;
    let estimate = |name: &str| stats.estimate_flops(stats.node(name).unwrap(), false);
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
        let path = testdata().join(model).join("profile");
        let profile = rtfprof::inputs::load_profile(&path, rtfprof::inputs::NodeDetail::ALL).unwrap();
        let mut stats = rtfprof::inputs::profile::import(profile, None, &path, false).unwrap();
        let logged: Vec<(usize, i64)> = stats.nodes.iter().enumerate().filter(|(_, n)| n.float_ops != 0).map(|(id, n)| (id, n.float_ops)).collect();
        stats.nodes.iter_mut().for_each(|n| n.float_ops = 0);
        stats.estimate_missing_flops(rtfprof::stats::flops::FlopsEstimate::Missing);
        for (id, tf) in logged {
            assert_eq!(stats.nodes[id].float_ops, tf, "{model} {}", stats.nodes[id].name);
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} float_ops values compared");
}

// ---------------------------------------------------------------------------
// TensorFlow's flops registry (testdata/flops/, written by tools/gen_flops.py)
// ---------------------------------------------------------------------------

fn flops_dir() -> std::path::PathBuf {
    testdata().join("flops")
}

/// Op types with a "flops" function in TF's Python registry.
pub(crate) fn registered_ops() -> Vec<String> {
    let text = std::fs::read_to_string(flops_dir().join("registered_ops.txt")).unwrap();
    text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).map(|l| l.split(' ').next().unwrap().to_owned()).collect()
}

/// TF's functions for these ops assert a shape their formulas do not use
/// (a convolution's input, Mean's output); rtfprof counts such nodes
/// without it (docs/book/src/reference/flops.md, `--help`).
const UNUSED_SHAPE: [&str; 5] = ["Conv2D", "Conv3D", "DepthwiseConv2dNative", "Dilation2D", "Mean"];

struct Case {
    node: String,
    op: String,
    tf: Option<i64>,
    rtfprof: Option<i64>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(flops_dir().join("cases.tsv")).unwrap();
    let value = |s: &str| (s != "-").then(|| s.parse::<i64>().unwrap());
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Case { node: f[0].into(), op: f[1].into(), tf: value(f[2]), rtfprof: value(f[3]) }
        })
        .collect()
}

/// `own_float_ops` of every node of a scope view run with `--estimate_flops`
/// (0: no float ops), through the command line.
fn estimated_by_cli(inputs: &[String]) -> std::collections::HashMap<String, i64> {
    estimated_with("--estimate_flops", inputs)
}

/// Each node's float ops with `flag` (`--estimate_flops` or `--default_op_log`).
fn estimated_with(flag: &str, inputs: &[String]) -> std::collections::HashMap<String, i64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scope.csv");
    // Every node, negative float ops included (tfprof hides those below 0).
    let mut args = vec!["scope".to_owned(), flag.into(), "--max_depth=1000".into(), format!("--min_float_ops={}", i64::MIN)];
    args.push(format!("--output=csv:outfile={}", out.display()));
    args.extend(inputs.iter().cloned());
    rtfprof(&args).run().ok();
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (name, flops) = (column("name"), column("own_float_ops"));
    reader.records().map(|r| r.unwrap()).map(|r| (r[name].to_owned(), r[flops].parse().unwrap())).collect()
}

#[test]
fn every_registered_type_has_an_estimator() {
    let registered = registered_ops();
    assert!(registered.len() >= 46, "only {} registered types", registered.len());
    let mut stats = Stats::new();
    stats.add_graph(load_graph(&flops_dir().join("graph.pbtxt"), true).unwrap());
    let cases = cases();
    for op in &registered {
        let counted: Vec<&Case> = cases.iter().filter(|c| c.op == *op && c.tf.is_some()).collect();
        assert!(!counted.is_empty(), "{op}: no case where TF counts float ops");
        for case in counted {
            let node = stats.node(&case.node).unwrap_or_else(|| panic!("{}: not in the graph", case.node));
            assert_eq!(node.op, op.as_str());
            assert!(stats.estimate_flops(node, false).is_some(), "{op} ({}): no estimate", case.node);
        }
    }
}

/// rtfprof estimates no op type beyond TF's registry, except Einsum.
#[test]
fn no_estimator_beyond_the_registry_but_einsum() {
    let registered = registered_ops();
    let mut estimated = std::collections::BTreeSet::new();
    for model in ["mlp", "cnn", "cnn_b8", "while", "matmuls", "flops", "flops/cnn_bn"] {
        let dir = testdata().join(model);
        let mut stats = Stats::new();
        stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
        for node in &stats.nodes {
            if stats.estimate_flops(node, false).is_some() {
                estimated.insert(node.op.to_string());
            }
        }
    }
    let extra: Vec<&String> = estimated.iter().filter(|op| !registered.contains(op)).collect();
    assert_eq!(extra, ["Einsum"]);
}

#[test]
fn every_case_equals_tensorflows_float_ops() {
    let graph = flops_dir().join("graph.pb");
    let estimated = estimated_by_cli(&[format!("--graph_path={}", graph.display())]);
    let cases = cases();
    let mut differ = Vec::new();
    for case in &cases {
        let got = estimated.get(&case.node).copied().unwrap_or_else(|| panic!("{}: not shown", case.node));
        assert_eq!((got != 0).then_some(got), case.rtfprof, "{} ({})", case.node, case.op);
        if case.tf != case.rtfprof {
            // The one documented difference: TF gives none for want of a
            // shape its formula does not use.
            assert!(case.tf.is_none() && UNUSED_SHAPE.contains(&case.op.as_str()), "{}", case.node);
            differ.push(case.op.as_str());
        }
    }
    assert!(cases.len() >= 80, "only {} cases", cases.len());
    differ.sort_unstable();
    assert_eq!(differ, UNUSED_SHAPE, "each op of the family has a case where TF gives none");
}

/// `--default_op_log` is TF's Python `profile()`: every case equals TF's
/// float ops, the shapes TF asserts without using included.
#[test]
fn the_default_op_log_equals_tensorflows_in_every_case() {
    let graph = flops_dir().join("graph.pb");
    let estimated = estimated_with("--default_op_log", &[format!("--graph_path={}", graph.display())]);
    for case in &cases() {
        let got = estimated.get(&case.node).copied().unwrap_or_else(|| panic!("{}: not shown", case.node));
        assert_eq!((got != 0).then_some(got), case.tf, "{} ({})", case.node, case.op);
    }
    let dir = flops_dir().join("cnn_bn");
    let estimated = estimated_with(
        "--default_op_log",
        &[format!("--graph_path={}", dir.join("graph.pb").display()), format!("--run_meta_path={}", dir.join("run_meta_unfused").display())],
    );
    assert_eq!(estimated["conv0/Conv2D"], 0, "TF cannot count it: its input's batch size is unknown");
}

/// A real trace (unknown batch size, batch norm): per node, rtfprof's
/// estimate from the GraphDef and RunMetadata equals the op log TF's logger
/// wrote from the same graph and run metadata, except where TF lacks a shape
/// its formula does not use.
#[test]
fn traced_cnn_with_batch_norm_equals_tensorflows_op_log() {
    let dir = flops_dir().join("cnn_bn");
    for setting in ["fused", "unfused"] {
        let run_meta = dir.join(format!("run_meta_{setting}"));
        let estimated = estimated_by_cli(&[format!("--graph_path={}", dir.join("graph.pb").display()), format!("--run_meta_path={}", run_meta.display())]);
        let op_log = load_op_log(&dir.join(format!("tfprof_log_{setting}"))).unwrap();
        let logged: std::collections::HashMap<&str, i64> =
            op_log.log_entries.iter().filter(|e| e.float_ops != 0).map(|e| (e.name.as_str(), e.float_ops)).collect();
        let mut stats = Stats::new();
        stats.add_graph(load_graph(&dir.join("graph.pb"), true).unwrap());
        let (mut compared, mut rsqrt_grads, mut tf_none) = (0, 0, Vec::new());
        for node in &stats.nodes {
            let got = estimated[&*node.name];
            match logged.get(&*node.name) {
                Some(&tf) => {
                    assert_eq!(got, tf, "{setting} {} ({})", node.name, node.op);
                    compared += 1;
                    rsqrt_grads += usize::from(node.op == "RsqrtGrad");
                }
                None if got == 0 => {}
                None => {
                    assert!(UNUSED_SHAPE.contains(&node.op), "{setting} {} ({}): TF logged none", node.name, node.op);
                    tf_none.push(node.name.to_string());
                }
            }
        }
        assert!(compared >= 80, "{setting}: only {compared} compared");
        assert_eq!(rsqrt_grads, 2, "{setting}");
        // Fused away, the first Conv2D has no run-time shape: neither counts
        // it. Left alone, it runs on a placeholder fed with a batch size the
        // graph does not know, so TF cannot count it and rtfprof does.
        let expected: &[&str] = if setting == "fused" { &[] } else { &["conv0/Conv2D"] };
        assert_eq!(tf_none, expected, "{setting}");
    }
}

/// A GraphDef saved without `_output_shapes` (`tf.io.write_graph(sess.graph_def,
/// …)`): the run-time shapes stand in for the shapes TF's graph would have
/// inferred. Every node rtfprof counts equals TF's op log (the documented
/// family aside); what it misses are nodes that did not run in the step.
#[test]
fn graph_without_shapes_uses_run_time_shapes() {
    let dir = flops_dir().join("cnn_bn");
    for setting in ["fused", "unfused"] {
        let run_meta = dir.join(format!("run_meta_{setting}"));
        let estimated =
            estimated_by_cli(&[format!("--graph_path={}", dir.join("graph_noshapes.pb").display()), format!("--run_meta_path={}", run_meta.display())]);
        let op_log = load_op_log(&dir.join(format!("tfprof_log_{setting}"))).unwrap();
        let mut stats = Stats::new();
        stats.add_graph(load_graph(&dir.join("graph_noshapes.pb"), true).unwrap());
        stats.add_run_meta(0, &load_run_meta(&run_meta).unwrap());
        let (mut compared, mut missed) = (0, 0);
        for entry in op_log.log_entries.iter().filter(|e| e.float_ops != 0) {
            match estimated[&entry.name] {
                0 => {
                    // It, or the producer of an input, did not run in the
                    // traced step (initializers, constant-folded inputs).
                    let node = stats.node(&entry.name).unwrap();
                    let ran = |name: &str| stats.node(name).is_some_and(|n| !n.execs.is_empty());
                    assert!(!ran(&node.name) || !node.inputs.iter().all(|i| ran(&i.name)), "{setting} {}", entry.name);
                    missed += 1;
                }
                got => {
                    assert_eq!(got, entry.float_ops, "{setting} {}", entry.name);
                    compared += 1;
                }
            }
        }
        assert!(compared >= 50, "{setting}: {compared} compared, {missed} missed");
        let logged: std::collections::HashSet<&str> = op_log.log_entries.iter().filter(|e| e.float_ops != 0).map(|e| e.name.as_str()).collect();
        for node in stats.nodes.iter().filter(|n| estimated.get(&*n.name).is_some_and(|&f| f != 0) && !logged.contains(&*n.name)) {
            assert!(UNUSED_SHAPE.contains(&node.op), "{setting} {} ({}): TF logged none", node.name, node.op);
        }
    }
}
