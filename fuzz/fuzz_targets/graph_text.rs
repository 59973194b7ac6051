//! Text-format GraphDef only (valid UTF-8), to stress prost-reflect's text
//! parser and the nesting check in front of it; then the graph pipeline.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|text: &str| {
    if let Ok(graph) = common::decode(|| rtfprof::inputs::decode_graph(text.as_bytes().to_vec(), common::path(), true)) {
        common::graph_pipeline(graph);
    }
});
