//! Shared by every fuzz target: run the pipeline the way the CLI does, and
//! render views with default options plus one "show everything" variant so
//! that every number the fuzzer reaches also goes through the formatters.

#![allow(dead_code)]

use std::path::Path;
use std::sync::OnceLock;

use rtfprof::inputs::GraphRecord;
use rtfprof::show::options::{Options, Select, Shown};
use rtfprof::stats::Stats;
use rtfprof::views::View;

/// The name errors give the fuzz input.
pub const PATH: &str = "fuzz-input";

pub fn path() -> &'static Path {
    Path::new(PATH)
}

/// Decodes on a thread with the stack of a rayon worker (2 MiB), where the CLI
/// decodes, so a recursion that would overflow there overflows here too.
pub fn decode<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    on_stack(2 << 20, f)
}

/// Renders on a thread with the CLI's render stack (1 GiB): the views recurse
/// along scopes and input chains by design (see `cli::render_with_deep_stack`).
pub fn render(stats: &Stats, views: &[View]) {
    on_stack(1 << 30, || {
        for opts in [Options::default(), everything()] {
            for &view in views {
                let _ = rtfprof::show::render(stats, view, &opts);
            }
        }
    })
}

/// `rtfprof memory` (analysis, text, JSON), `rtfprof report`'s page and
/// the scope view's folded stacks (time and bytes), on the render stack:
/// the outputs that replay allocation records and write names unescaped
/// elsewhere.
pub fn memory_report_folded(stats: Stats) {
    use rtfprof::outputs::{folded, html};
    use rtfprof::show::options::Shown;
    let loaded = rtfprof::load::Loaded {
        stats,
        kinds: vec![rtfprof::inputs::Kind::TfFiles],
        traces: Vec::new(),
        listing: String::new(),
        coverage: Vec::new(),
        rank_summaries: None,
    };
    let stats = &loaded.stats;
    on_stack(1 << 30, || {
        let profile = rtfprof::memory::analyze(&loaded, -1).expect("every step: no step to miss");
        let _ = rtfprof::outputs::memory::text::render(&profile, &Options::default());
        rtfprof::outputs::memory::json::write(&profile, std::io::sink()).expect("writes to a sink");
        let report = Options { max_depth: i64::MAX, ..Options::default() };
        if let Ok(page) = html::report_page(&loaded, &report, &html::Sources::default(), html::ReadApart::default()) {
            html::write(&page, std::io::sink()).expect("writes to a sink");
        }
        if let Ok(scope) = rtfprof::show::run(stats, View::Scope, &report) {
            for metric in [Shown::Micros, Shown::Bytes] {
                folded::write(&scope.root, metric, std::io::sink()).expect("writes to a sink");
            }
        }
    })
}

fn on_stack<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(bytes)
            .spawn_scoped(s, f)
            .expect("spawn fuzz thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Every column, every step averaged, deep trees, order by bytes.
fn everything() -> Options {
    static SELECT: OnceLock<String> = OnceLock::new();
    let all = SELECT.get_or_init(|| Shown::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(","));
    Options {
        select: Select::parse(all).expect("every column is valid"),
        max_depth: 1000,
        order_by: rtfprof::show::options::OrderBy::Bytes,
        ..Options::default()
    }
}

/// A small real graph (mlp's) that run_meta and op_log inputs are ingested
/// against, decoded once.
pub fn fixed_graph() -> GraphRecord {
    static GRAPH: OnceLock<GraphRecord> = OnceLock::new();
    GRAPH
        .get_or_init(|| {
            let bytes = include_bytes!("../../testdata/mlp/graph.pb");
            rtfprof::inputs::decode_graph(&bytes[..], Path::new("mlp/graph.pb"), true).expect("mlp graph decodes")
        })
        .clone()
}

/// Ingests a decoded graph and renders the scope and graph views.
pub fn graph_pipeline(graph: GraphRecord) {
    let mut stats = Stats::new();
    // (Infers static shapes: estimates are on in a new Stats.)
    stats.add_graph(graph);
    stats.estimate_missing_flops(rtfprof::stats::flops::FlopsEstimate::TfDefaultOpLog);
    render(&stats, &[View::Scope, View::Graph]);
}
