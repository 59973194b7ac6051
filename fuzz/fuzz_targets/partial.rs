//! Partial profile bytes → `partial::from_bytes` → the merged node model →
//! all four views. Bad bytes must give an error, never a panic.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(partial) = common::decode(|| rtfprof::partial::from_bytes(data, common::path())) else { return };
    // A valid partial's own bytes read back to the same bytes.
    let bytes = rtfprof::partial::to_bytes(&partial);
    let again = rtfprof::partial::from_bytes(&bytes, common::path()).expect("a partial's own bytes read back");
    assert!(rtfprof::partial::to_bytes(&again) == bytes);
    let loaded = partial.into_loaded();
    common::render(&loaded.stats, &[View::Scope, View::Graph, View::Op, View::Code]);
});
