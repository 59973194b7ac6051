//! Fixture loading shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rtfprof::inputs::{InputPaths, Inputs};
use rtfprof::stats::Stats;

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The graph, 3 run_meta files and op log of a fixture.
pub fn fixture_paths(model: &str) -> InputPaths {
    let dir = testdata().join(model);
    InputPaths {
        graph_path: Some(dir.join("graph.pb")),
        run_meta_paths: (0..3).map(|i| dir.join(format!("run_meta_{i}"))).collect(),
        op_log_path: Some(dir.join("tfprof_log")),
        ..Default::default()
    }
}

/// The same inputs as command-line flags.
pub fn fixture_flags(model: &str) -> Vec<String> {
    let paths = fixture_paths(model);
    let run_metas: Vec<String> = paths.run_meta_paths.iter().map(|p| p.display().to_string()).collect();
    vec![
        format!("--graph_path={}", paths.graph_path.unwrap().display()),
        format!("--run_meta_path={}", run_metas.join(",")),
        format!("--op_log_path={}", paths.op_log_path.unwrap().display()),
    ]
}

/// A fixture ingested as the CLI does it.
pub fn fixture_stats(model: &str) -> Stats {
    let inputs = Inputs::load(&fixture_paths(model)).expect("fixture loads");
    let mut stats = Stats::new();
    stats.add_graph(inputs.graph);
    stats.add_op_log(inputs.op_log.expect("op log"));
    stats.add_run_meta_files(&inputs.run_metas, |_| {}).expect("run metadata decodes");
    stats
}

/// Headless Chromium for the tests that check what a browser renders:
/// `RTFPROF_CHROMIUM`, else `chromium` (Debian's) or another Chromium on
/// PATH; `None`, saying which checks are skipped, when there is none.
pub fn chromium(checks: &str) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("RTFPROF_CHROMIUM") {
        Some(path) => vec![PathBuf::from(path)],
        None => ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .flat_map(|name| std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).map(move |dir| dir.join(name)).collect::<Vec<_>>())
            .collect(),
    };
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipping {checks}: no chromium (apt-get install -y chromium, or set RTFPROF_CHROMIUM)");
    }
    found
}

/// Runs the rtfprof binary of this build with `stdin` piped in (the
/// `tfprof>` prompt's commands, or nothing), in `cwd` when given.
pub fn run_rtfprof(args: &[String], stdin: &str, cwd: Option<&Path>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtfprof"));
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().expect("spawn rtfprof");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// Text of a serialized DOM (Chromium's `--dump-dom`) with its entities
/// decoded; `&amp;` last, so that an escaped entity stays text.
pub fn unescape_html(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&nbsp;", "\u{a0}").replace("&amp;", "&")
}
