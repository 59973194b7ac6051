//! `--checkpoint_path` end to end: variables in a real TF checkpoint
//! (testdata/ckpt, written by tools/gen_checkpoint.py) get the op type
//! `_checkpoint_variables`, and `--select tensor_value` prints each shown
//! variable's value right after its line, in tfprof's layout
//! (`format_tensor_value`, checked against C++-printed strings in
//! tests/integration/checkpoint.rs). TensorFlow's Python API cannot pass a checkpoint to
//! the tfprof engine, so there are no tfprof goldens for this.

use rtfprof::inputs::checkpoint::{Checkpoint, TensorValues, format_tensor_value};

use crate::common;

use common::{rtfprof, testdata};

fn run(args: &[&str]) -> (String, String) {
    let dir = testdata().join("ckpt");
    let mut all = vec!["scope".to_owned(), format!("--graph_path={}", dir.join("graph.pbtxt").display())];
    all.extend(args.iter().map(|a| a.replace("CKPT", &dir.join("model.ckpt").display().to_string())));
    let out = rtfprof(&all).run().ok();
    (out.stdout_str().to_owned(), out.stderr_str().to_owned())
}

#[test]
fn variables_print_their_checkpoint_values() {
    let checkpoint = Checkpoint::open(&testdata().join("ckpt/model.ckpt")).unwrap();
    let (out, _) = run(&["--checkpoint_path=CKPT", "--account_type_regexes=_checkpoint_variables", "--select=params,tensor_value", "--max_depth=100"]);
    let mut checked = 0;
    for name in checkpoint.variable_shapes().keys() {
        let Ok(tensor) = checkpoint.tensor(name) else { continue }; // sliced variables
        let text = format_tensor_value(&tensor);
        if matches!(tensor.values, TensorValues::Unsupported) || text.is_empty() {
            continue;
        }
        let line_start = out.find(&format!(" {name} (")).unwrap_or_else(|| panic!("{name} not shown"));
        let after_line = &out[line_start..];
        let value_start = after_line.find('\n').unwrap() + 1;
        assert!(after_line[value_start..].starts_with(&text), "value of {name}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} variables checked");
}

#[test]
fn without_a_checkpoint_nothing_is_a_checkpoint_variable() {
    let (out, _) = run(&["--account_type_regexes=_checkpoint_variables", "--select=params,tensor_value"]);
    let body = out.split("node name | # parameters\n").nth(1).unwrap();
    assert_eq!(body, "_TFProfRoot (--/0 params)\n");
}
