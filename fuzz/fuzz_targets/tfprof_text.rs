//! Saved tfprof text (the input of `rtfprof diff --left_text`) → parse →
//! value tree for every metric → diff against itself → report.
#![no_main]

use rtfprof::diff::{self, Metric, ValueTree};
use rtfprof::inputs::tfprof_text;
use rtfprof::outputs::diff::Labels;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = std::path::Path::new("fuzz.txt");
    let Ok(root) = tfprof_text::parse(text, path) else { return };
    for metric in Metric::VALID.iter().map(|m| Metric::parse(m).expect("valid metric")) {
        let Ok(tree) = ValueTree::from_text(&root, metric, path) else { continue };
        let merged = diff::merge(Some(&tree), Some(&tree));
        let shown = diff::filter(merged, 0.0, 0, true).expect("root kept");
        let labels = Labels { left_name: "a", right_name: "b", left_source: "x", right_source: "y" };
        let _ = rtfprof::outputs::diff::render(&shown, metric, 0.0, 0, &labels);
    }
});
