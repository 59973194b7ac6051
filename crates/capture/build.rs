//! Generates the gRPC client (and, for tests, the server) of TSL's
//! `tensorflow.ProfilerService` from the vendored schemas in
//! `../proto/proto`, in pure Rust: protox parses them, tonic-prost-build
//! writes the code, no `protoc` binary.

use std::{env, path::PathBuf};

const PROTOS: &str = "../proto/proto";
const SERVICE: &str = "tsl/profiler/protobuf/profiler_service.proto";
const XPLANE: &str = "tsl/profiler/protobuf/xplane.proto";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={PROTOS}/tsl/profiler/protobuf");
    let mut descriptors = protox::compile([SERVICE], [PROTOS])?;
    // The response's XSpace is written to its file as the server sent it, so
    // it is kept as bytes (a message field and a bytes field are the same on
    // the wire): a trace of hundreds of MB is never decoded and re-encoded
    // here, and the steps table reads the file as any other.
    descriptors.file.retain(|file| file.name() != XPLANE);
    for file in &mut descriptors.file {
        file.dependency.retain(|d| d != XPLANE);
        for message in file.message_type.iter_mut().filter(|m| m.name() == "ProfileResponse") {
            for field in message.field.iter_mut().filter(|f| f.name() == "xspace") {
                field.set_type(prost_types::field_descriptor_proto::Type::Bytes);
                field.type_name = None;
            }
        }
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .build_server(true)
        .server_mod_attribute(".", "#[cfg(feature = \"server\")]")
        .bytes(".")
        .out_dir(out_dir)
        .compile_fds(descriptors)?;
    Ok(())
}
