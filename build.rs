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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    let descriptors = protox::compile(ROOTS, ["proto"])?;
    let descriptor_path = out_dir.join("tensorflow_descriptors.bin");
    std::fs::write(&descriptor_path, prost::Message::encode_to_vec(&descriptors))?;
    prost_build::Config::new()
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
