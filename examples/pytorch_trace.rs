//! Reads a PyTorch trace and prints torch's `key_averages().table()`, with
//! the time of each phase on stderr (for `bench/pytorch.md`):
//!
//!     cargo run --release --example pytorch_trace -- TRACE [SORT_BY]

use std::path::PathBuf;
use std::time::Instant;

use rtfprof::inputs::pytorch::Trace;
use rtfprof::key_averages::key_averages;
use rtfprof::outputs::torch_table::{TableOptions, table};

/// The allocator `rtfprof` itself uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let path = PathBuf::from(std::env::args().nth(1).expect("TRACE"));
    let start = Instant::now();
    let trace = match Trace::open(&path) {
        Ok(trace) => trace,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let read = start.elapsed();
    let rows = key_averages(&trace, false);
    let averaged = start.elapsed() - read;
    let mut options = TableOptions::for_trace(&trace);
    options.sort_by = std::env::args().nth(2);
    print!("{}", table(&rows, &options).unwrap_or_else(|e| panic!("{e}")));
    eprintln!(
        "read {:.3} s ({} events, {} memory records, {} flows, {} strings); key_averages {:.3} s ({} rows)",
        read.as_secs_f64(),
        trace.events.len(),
        trace.memory.len(),
        trace.flows.len(),
        trace.strings.len(),
        averaged.as_secs_f64(),
        rows.len()
    );
}
