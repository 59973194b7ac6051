//! Static shape inference against TensorFlow's: for every GraphDef of
//! `testdata/shapes/` (written without `_output_shapes` by
//! `tools/gen_shapes.py`), each tensor's inferred shape must be what a
//! `tf.Graph` infers on import (`shapes.json`), or less known, never more
//! nor another. The tensors rtfprof leaves less known are counted per
//! graph: the count may fall, not grow (a ratchet; lower it when it falls).

use std::path::PathBuf;

use rtfprof_model::shapes::{self, Shape};

/// Tensors left less known than TF's, per graph (the ratchet).
const NOT_INFERRED: &[(&str, usize)] = &[
    ("autoencoder", 0),
    ("cnn", 0),
    ("control_flow", 0),
    ("feeders", 0),
    ("image", 0),
    ("lstm_sep", 0),
    ("registry", 0),
    ("rnn", 0),
    ("segmenter", 0),
    ("text_cnn", 0),
    ("transformer", 0),
];

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/shapes")
}

/// TF's shape as JSON: a list of dims (-1 unknown) or null.
fn tf_shape(value: &serde_json::Value) -> Shape {
    value.as_array().map(|dims| dims.iter().map(|d| d.as_i64().unwrap()).collect())
}

/// `ours` says no more than `tf`, and nothing else.
fn at_most(ours: &Shape, tf: &Shape) -> bool {
    match (ours, tf) {
        (None, _) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| x == -1 || x == y),
        (Some(_), None) => false,
    }
}

#[test]
fn inferred_shapes_are_tensorflows() {
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for &(name, allowed) in NOT_INFERRED {
        let dir = testdata().join(name);
        let graph = super::load_graph(&dir.join("graph.pb"), true).unwrap();
        let inferred = shapes::infer_with(&graph.nodes, &graph.functions);
        let text = std::fs::read_to_string(dir.join("shapes.json")).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let index: std::collections::HashMap<&str, usize> = graph.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        let (mut tensors, mut missing) = (0, Vec::new());
        for entry in doc["nodes"].as_array().unwrap() {
            let (node, op) = (entry[0].as_str().unwrap(), entry[1].as_str().unwrap());
            let ours = inferred[index[node]].as_ref();
            for (slot, tf) in entry[2].as_array().unwrap().iter().enumerate() {
                tensors += 1;
                let tf = tf_shape(tf);
                let mine = ours.and_then(|o| o.get(slot).cloned()).flatten();
                if ours.is_some_and(|o| o.len() != entry[2].as_array().unwrap().len()) {
                    failures.push(format!("{name} {node} ({op}): {} outputs, TF has {}", ours.unwrap().len(), entry[2].as_array().unwrap().len()));
                }
                if mine == tf {
                    continue;
                }
                let line = format!("{name} {node}:{slot} ({op}): {mine:?}, TF {tf:?}");
                if at_most(&mine, &tf) { missing.push(line) } else { failures.push(line) }
            }
        }
        report.push(format!("{name}: {tensors} tensors, {} less known than TF's (at most {allowed})", missing.len()));
        if missing.len() > allowed {
            failures.push(format!("{name}: {} tensors less known than TF's, the ratchet allows {allowed}:\n  {}", missing.len(), missing.join("\n  ")));
        } else if !missing.is_empty() {
            report.push(format!("  {}", missing.join("\n  ")));
        }
    }
    println!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}\n{}", report.join("\n"), failures.join("\n"));
}
