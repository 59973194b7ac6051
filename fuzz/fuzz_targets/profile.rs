//! ProfileProto bytes → decode → the node model (`inputs::profile::import`) → all four views.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(profile) = common::decode(|| rtfprof::inputs::decode_profile(data.to_vec(), common::path(), rtfprof::inputs::NodeDetail::ALL)) else { return };
    let Ok(stats) = rtfprof::inputs::profile::import(profile, None, common::path(), false) else { return };
    common::render(&stats, &[View::Scope, View::Graph, View::Op, View::Code]);
});
