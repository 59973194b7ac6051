//! Times each phase of a scope view on real inputs (decode, ingest, view),
//! to see where a run spends its time:
//!
//!     cargo run --release --example phases -- DIR [view] [profile]
//!
//! DIR holds graph.pb, run_meta_0…, tfprof_log and profile (e.g.
//! bench/data/x1); with `profile`, the view is built from the profile file.

use std::path::PathBuf;
use std::time::Instant;

use rtfprof::inputs::tf::TfFiles;
use rtfprof::inputs::{InputPaths, NodeDetail};
use rtfprof::show::{self, Options};
use rtfprof::stats::Stats;
use rtfprof::views::View;

/// The allocator `rtfprof` itself uses, so the phases cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // As `rtfprof` runs, or the phases pay for pages it would reuse.
    rtfprof_cli::tune_process_memory();
    let dir = PathBuf::from(std::env::args().nth(1).expect("DIR"));
    let view = match std::env::args().nth(2).as_deref() {
        Some("graph") => View::Graph,
        Some("op") => View::Op,
        Some("code") => View::Code,
        _ => View::Scope,
    };
    if std::env::args().nth(3).as_deref() == Some("profile") {
        let t = Instant::now();
        let detail = NodeDetail { code_traces: view == View::Code, attrs: false, allocations: false };
        let profile = rtfprof::inputs::load_profile(&dir.join("profile"), detail).expect("profile");
        let loaded = t.elapsed();
        let t = Instant::now();
        let stats = rtfprof::inputs::profile::import(profile, None, &dir.join("profile"), false).expect("profile");
        let ingest = t.elapsed();
        let t = Instant::now();
        let text = show::render(&stats, view, &Options::default()).expect("view");
        let shown = t.elapsed();
        eprintln!("load {loaded:?}, decode + ingest {ingest:?}, {} view {shown:?} ({} bytes)", view.as_str(), text.len());
        return;
    }
    let mut run_metas: Vec<PathBuf> = (0..).map(|i| dir.join(format!("run_meta_{i}"))).take_while(|p| p.exists()).collect();
    run_metas.sort();
    let paths = InputPaths {
        graph_path: Some(dir.join("graph.pb")),
        run_meta_paths: run_metas,
        op_log_path: Some(dir.join("tfprof_log")),
        // As `rtfprof <view>` reads them.
        skip_code_traces: view != View::Code,
        skip_attrs: true,
        ..Default::default()
    };
    let t = Instant::now();
    let inputs = TfFiles::open(&paths, None).expect("inputs");
    let decoded = t.elapsed();
    let t = Instant::now();
    let mut stats = Stats::new();
    stats.add_graph(inputs.graph);
    let graph = t.elapsed();
    let t = Instant::now();
    stats.add_op_log(inputs.op_log.unwrap());
    let op_log = t.elapsed();
    let t = Instant::now();
    rtfprof::inputs::tf::add_run_meta_files(&mut stats, &inputs.run_metas, |_| {}).unwrap();
    let run_meta = t.elapsed();
    let t = Instant::now();
    let text = show::render(&stats, view, &Options::default()).expect("view");
    let shown = t.elapsed();
    eprintln!("decode {decoded:?}, graph {graph:?}, op log {op_log:?}, run_meta {run_meta:?}, {} view {shown:?} ({} bytes)", view.as_str(), text.len());
}
