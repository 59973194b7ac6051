//! XSpace bytes → the XPlane conversion → ingest → scope and op views;
//! and the step breakdown of `rtfprof steps`.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::stats::Stats;
use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(host) = rtfprof::steps::xplane::analyze(data) {
        let steps = rtfprof::steps::from_hosts(&[host.clone(), host]);
        let _ = rtfprof::steps::render_text(&steps);
        let _ = rtfprof::steps::summary(&steps);
    }
    let Ok(trace) = rtfprof::inputs::xplane::convert::convert(data) else { return };
    let mut stats = Stats::new();
    stats.add_exec_totals(trace.totals.len(), |i| trace.exec_total(i));
    common::render(&stats, &[View::Scope, View::Op]);
});
