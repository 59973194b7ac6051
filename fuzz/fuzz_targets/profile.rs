//! ProfileProto bytes → decode → `Stats::from_profile` → all four views.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::stats::Stats;
use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(profile) = common::decode(|| rtfprof::inputs::decode_profile(data.to_vec(), common::path(), rtfprof::inputs::NodeDetail::ALL)) else { return };
    let Ok(stats) = Stats::from_profile(profile) else { return };
    common::render(&stats, &[View::Scope, View::Graph, View::Op, View::Code]);
});
