//! Compiles TensorFlow's schemas in `proto/` with prost, in pure Rust (protox
//! parses them, so no `protoc` binary is needed), and writes the descriptor set
//! that text-format GraphDef parsing reflects over.

use std::{env, path::PathBuf};

const ROOTS: &[&str] = &[
    "tensorflow/core/framework/graph.proto",
    "tensorflow/core/protobuf/config.proto",
    "tensorflow/core/profiler/tfprof_log.proto",
    "tensorflow/core/profiler/tfprof_options.proto",
    "tensorflow/core/profiler/tfprof_output.proto",
    "tensorflow/core/profiler/profile.proto",
    "tensorflow/core/protobuf/tensor_bundle.proto",
    "tsl/profiler/protobuf/xplane.proto",
    "xla/service/hlo.proto",
    "tensorflow/core/util/event.proto",
];

/// The message fields of `xla.HloInstructionProto` kept out of line; its
/// `shape` and `metadata`, read for every instruction, stay inline.
const HLO_INSTRUCTION_OPTIONS: &[&str] = &[
    "literal",
    "window",
    "convolution_dimension_numbers",
    "padding_config",
    "outfeed_shape",
    "dot_dimension_numbers",
    "ragged_dot_dimension_numbers",
    "gather_dimension_numbers",
    "sharding",
    "scatter_dimension_numbers",
    "precision_config",
    "domain_entry_sharding",
    "domain_exit_sharding",
    "triangular_solve_options",
    "cholesky_options",
    "parameter_replication",
    "frontend_attributes",
    "statistics_viz",
    "original_value",
    "result_accuracy",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    let descriptors = protox::compile(ROOTS, ["proto"])?;
    let descriptor_path = out_dir.join("tensorflow_descriptors.bin");
    std::fs::write(&descriptor_path, prost::Message::encode_to_vec(&descriptors))?;
    let mut config = prost_build::Config::new();
    for field in HLO_INSTRUCTION_OPTIONS {
        // An HLO instruction's options (literal, window, sharding, …) are
        // rarely set and were 4 KB of every instruction inline: decoding a
        // JAX program's thousands of instructions was most of the time
        // rtfprof took on a small JAX trace (bench/README.md).
        config.boxed(format!(".xla.HloInstructionProto.{field}"));
    }
    config
        .btree_map(["."])
        // TensorProto is 400 bytes; inline in AttrValue's oneof it made every
        // node's attr map several KB even without a tensor attr.
        .boxed(".tensorflow.AttrValue.value.tensor")
        .boxed(".tensorflow.AttrValue.value.list")
        .boxed(".tensorflow.AttrValue.value.func")
        .include_file("_includes.rs")
        .compile_fds(descriptors)?;
    Ok(())
}
