//! Differential: whenever the text-format transcoder takes the input as a
//! GraphDef, prost-reflect must take it too and give the same GraphDef
//! (compared by encoding, which tells NaNs apart, and by `Debug`, which tells
//! -0.0 from 0.0). Input it rejects is prost-reflect's alone, as in the CLI.
#![no_main]

#[path = "common.rs"]
mod common;

use prost::Message;
use prost_reflect::DynamicMessage;
use rtfprof::inputs::text_format;
use rtfprof::proto::tensorflow::GraphDef;

libfuzzer_sys::fuzz_target!(|text: &str| {
    // On a rayon worker's stack, as in the CLI: the transcoder does not recurse.
    let Ok(fast) = common::decode(|| text_format::parse::<GraphDef>(text, "tensorflow.GraphDef")) else {
        return;
    };
    let descriptor = rtfprof::proto::descriptor_pool().get_message_by_name("tensorflow.GraphDef").unwrap();
    // prost-reflect recurses once per level: a stack with room to spare (the
    // transcoder rejects nesting over 100).
    let slow: GraphDef = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(32 << 20)
            .spawn_scoped(s, || {
                let dynamic =
                    DynamicMessage::parse_text_format(descriptor, text).unwrap_or_else(|e| panic!("the transcoder took text that prost-reflect rejects: {e}"));
                dynamic.transcode_to::<GraphDef>().expect("prost-reflect's message decodes")
            })
            .unwrap()
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    assert_eq!(fast.encode_to_vec(), slow.encode_to_vec(), "different messages");
    assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "different messages");
});
