//! XSpace bytes → the XPlane conversion → ingest → scope and op views;
//! and the step breakdown of `rtfprof steps`.
#![no_main]

#[path = "common.rs"]
mod common;

use rtfprof::inputs::xplane::convert;
use rtfprof::stats::Stats;
use rtfprof::views::View;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(host) = rtfprof::steps::xplane::analyze(data) {
        let steps = rtfprof::steps::from_hosts(&[host.clone(), host]);
        let _ = rtfprof::outputs::steps::render_text(&steps);
        let _ = rtfprof::steps::summary(&steps);
    }
    let mut stats = Stats::new();
    let mut known = rtfprof::stats::InputNodes::default();
    let mut sink = |names: &convert::TotalNames<'_>, totals: &[convert::Total]| {
        stats.add_exec_totals(&mut known, totals.len(), |i| names.exec_total(&totals[i]));
    };
    if convert::convert_releasing(data, convert::Keep { allocator_events: true, hlo_steps: true }, &|_| {}, &mut sink).is_err() {
        return;
    }
    common::render(&stats, &[View::Scope, View::Op]);
});
