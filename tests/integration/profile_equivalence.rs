//! A ProfileProto written by tfprof from a graph, an op log and N run
//! metadata files must show exactly what those files show directly, in every
//! view and step (the fixtures' `profile` files were written by TensorFlow
//! from the same inputs; see tools/gen_golden.py).

use std::path::Path;

use rtfprof::inputs::InputPaths;
use rtfprof::show::{self, Options, options::Select};
use rtfprof::stats::Stats;
use rtfprof::views::View;

use crate::common;

fn stats_from_profile(dir: &Path) -> Stats {
    let paths = InputPaths { profile_path: Some(dir.join("profile")), ..Default::default() };
    rtfprof::load::load_paths(&paths).expect("profile loads").stats
}

#[test]
fn profile_files_show_what_their_inputs_show() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut compared = 0;
    for model in ["mlp", "cnn", "while", "gpu_synth"] {
        let dir = testdata.join(model);
        let (direct, profiled) = (common::fixture_stats(model), stats_from_profile(&dir));
        assert_eq!(direct.steps, profiled.steps, "{model}: steps");
        for view in [View::Scope, View::Graph, View::Op, View::Code] {
            for step in [-1, 0, 2] {
                let opts = Options {
                    step,
                    max_depth: 1000,
                    select: Select::parse("params,float_ops,bytes,peak_bytes,residual_bytes,output_bytes,micros,occurrence,device,op_types,input_shapes")
                        .unwrap(),
                    ..Options::default()
                };
                let a = show::render(&direct, view, &opts).expect("direct view");
                let b = show::render(&profiled, view, &opts).expect("profile view");
                assert!(a == b, "{model} {} step {step}: profile and run_meta views differ", view.as_str());
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 4 * 4 * 3);
}
