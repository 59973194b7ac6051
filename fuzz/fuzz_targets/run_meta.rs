//! RunMetadata bytes → decode (allocation records kept) → ingest as step 0
//! over a fixed graph (mlp's) → scope and op views, then `rtfprof memory`,
//! the HTML report's page and folded stacks.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::inputs::run_meta::Detail;
use rtfprof::stats::Stats;
use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let detail = Detail { shapes: false, allocations: true };
    let Ok(run_meta) = common::decode(|| rtfprof::inputs::decode_run_meta_with(data, common::path(), detail)) else { return };
    let mut stats = Stats::new();
    stats.add_graph(common::fixed_graph());
    let coverage = stats.add_run_meta(0, &run_meta);
    assert!(coverage.is_finite(), "run coverage {coverage}");
    common::render(&stats, &[View::Scope, View::Op]);
    common::memory_report_folded(stats);
});
