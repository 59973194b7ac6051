//! Prints each event with a stream of a PyTorch trace as HTA's whole
//! microseconds time it ([`breakdown::span`] with [`Timing::Hta`]), one
//! line each: `ts_ns dur_ns correlation start_us end_us`. For
//! `tools/torch/hta_spans_diff.py`, which compares them with HTA's own
//! dataframe:
//!
//!     cargo run --release --example hta_spans -- TRACE

use std::path::PathBuf;

use rtfprof::hta::{Timing, span};
use rtfprof::inputs::pytorch::Trace;

fn main() {
    let path = PathBuf::from(std::env::args().nth(1).expect("TRACE"));
    let trace = Trace::open(&path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let mut out = String::new();
    for e in trace.events.iter().filter(|e| e.stream.is_some()) {
        let (start, end) = span(e, Timing::Hta);
        let correlation = e.correlation.map_or(0, |c| c.get());
        out.push_str(&format!("{} {} {correlation} {start} {end}\n", e.ts, e.dur));
    }
    print!("{out}");
}
