//! Binary or text GraphDef bytes → decode → ingest → scope and graph views.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(graph) = common::decode(|| rtfprof::inputs::decode_graph(data.to_vec(), common::path(), true)) {
        common::graph_pipeline(graph);
    }
});
