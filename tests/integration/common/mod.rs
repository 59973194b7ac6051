//! Fixture loading shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rtfprof::inputs::InputPaths;
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

/// A fixture loaded by the library's loader, as the CLI loads it.
pub fn fixture_stats(model: &str) -> Stats {
    rtfprof::load::load_paths(&fixture_paths(model)).expect("fixture loads").stats
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

/// The shared real traces beside the repository (`../shared/traces`).
pub fn shared_traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces")
}

/// The JAX 0.11 H200 traces of `../shared/traces/jax_h200`: three
/// programs with XLA's command buffers and without (`_nocb`), and one of
/// host-device transfers.
pub const JAX_GPU_TRACES: [&str; 7] = ["jax_mlp", "jax_mlp_nocb", "flax_cnn", "flax_cnn_nocb", "jax_lstm", "jax_lstm_nocb", "jax_xfer"];

/// The shared traces with XProf goldens (`tools/xplane/xprof_goldens.py`), as
/// (golden prefix, trace): each [`JAX_GPU_TRACES`] trace present and the
/// TPU inference trace, where `../shared` has them.
pub fn shared_xplane_goldens() -> Vec<(String, PathBuf)> {
    let mut traces: Vec<(String, PathBuf)> = JAX_GPU_TRACES.iter().filter_map(|&name| jax_gpu_trace(name).map(|trace| (format!("{name}.vm"), trace))).collect();
    let tpu = shared_traces().join("xla_tpu_inference/run/host0.xplane.pb");
    if tpu.exists() {
        traces.push(("xla_tpu_inference.host0".into(), tpu));
    }
    traces
}

/// A JAX 0.11 H200 trace of `../shared/traces/jax_h200`, or `None`, saying
/// so, where that directory is absent (it is not part of the repository).
pub fn jax_gpu_trace(name: &str) -> Option<PathBuf> {
    let trace = shared_traces().join("jax_h200").join(name).join("vm.xplane.pb");
    if trace.exists() {
        Some(trace)
    } else {
        eprintln!("skipped: {} is absent (it is not part of the repository)", trace.display());
        None
    }
}

/// Held-out JAX GPU traces, of programs no test was written against: where
/// `RTFPROF_HELDOUT_JAX_GPU` names their folder (`<name>/vm.xplane.pb`, as
/// tools/xplane/record_heldout.py records them, with XProf's goldens in
/// `expected/` by `tools/xplane/xprof_goldens.py --heldout`), the JAX GPU
/// tests hold them to the shared traces' rules. Unset, there are none.
pub fn heldout_jax_gpu() -> Vec<(String, PathBuf)> {
    let Some(dir) = heldout_dir() else { return Vec::new() };
    let mut traces: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("RTFPROF_HELDOUT_JAX_GPU={}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path().join("vm.xplane.pb"))
        .filter(|trace| trace.exists())
        .map(|trace| (trace.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned(), trace))
        .collect();
    traces.sort();
    assert!(!traces.is_empty(), "RTFPROF_HELDOUT_JAX_GPU={}: no <name>/vm.xplane.pb", dir.display());
    traces
}

/// Named traces: (name, path).
pub type Traces = Vec<(String, PathBuf)>;

/// The held-out traces split as the tests need them: those XProf
/// attributes (the `_nocb` twins, and any recording without a twin), and
/// those recorded with command buffers beside their `_nocb` twin.
pub fn heldout_jax_gpu_by_twin() -> (Traces, Traces) {
    let all = heldout_jax_gpu();
    let has_twin = |name: &str| all.iter().any(|(n, _)| *n == format!("{name}_nocb"));
    all.iter().cloned().partition(|(name, _)| !has_twin(name))
}

fn heldout_dir() -> Option<PathBuf> {
    std::env::var_os("RTFPROF_HELDOUT_JAX_GPU").filter(|d| !d.is_empty()).map(PathBuf::from)
}

/// The (first host's) trace file of an XPlane fixture (its folder) or of a
/// shared trace (the file).
pub fn first_trace(path: &Path) -> PathBuf {
    if path.is_file() {
        return path.to_owned();
    }
    let run = path.join("plugins/profile/run0");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&run).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".xplane.pb")).collect();
    files.sort();
    files.remove(0)
}

/// A directory of `../shared/traces` (e.g. `torch_h200/torch_tx`), or
/// `None`, saying so, where it is absent (it is not part of the repository).
pub fn shared_trace_dir(name: &str) -> Option<PathBuf> {
    let dir = shared_traces().join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent (it is not part of the repository)", dir.display());
        None
    }
}

/// XProf's answer for a trace (`testdata/xplane/expected/<name>.json`, by
/// `tools/xplane/xprof_goldens.py`), e.g. `jax_mlp.kernel_stats`; for a
/// held-out trace, its folder's `expected/<name>.json`.
pub fn xprof_golden(name: &str) -> serde_json::Value {
    let heldout = heldout_dir().map(|dir| dir.join("expected").join(format!("{name}.json"))).filter(|p| p.exists());
    let path = heldout.unwrap_or_else(|| testdata().join("xplane/expected").join(format!("{name}.json")));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The rows of an XProf table (`{cols, rows}`) as maps from column id to
/// value.
pub fn xprof_table_rows(table: &serde_json::Value) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let cols: Vec<String> = table["cols"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| cols.iter().cloned().zip(row["c"].as_array().unwrap().iter().map(|c| c["v"].clone())).collect())
        .collect()
}

/// `rtfprof <args>` with `--output json:outfile=…`: the JSON it wrote;
/// fails the test, printing stderr, if the command fails.
pub fn rtfprof_json(args: &[&str]) -> serde_json::Value {
    rtfprof_json_of(args)
}

/// `rtfprof_json` for arguments of any string type.
pub fn rtfprof_json_of<S: AsRef<str>>(args: &[S]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let mut all: Vec<String> = args.iter().map(|a| a.as_ref().to_owned()).collect();
    all.push(format!("--output=json:outfile={}", out.display()));
    let output = run_rtfprof(&all, "", None);
    assert!(output.status.success(), "rtfprof {all:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// A `Command` for the rtfprof binary of this build, for a test that sets
/// more than arguments (environment, working directory, pipes).
pub fn rtfprof_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_rtfprof"))
}

/// `rtfprof <args>` with stdin closed (`Command::output`): its output.
pub fn rtfprof_output<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    rtfprof_command().args(args).output().expect("run rtfprof")
}

/// `rtfprof <args>`: stdout and stderr (UTF-8) and whether it succeeded.
pub fn rtfprof_ok<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (String, String, bool) {
    let out = rtfprof_output(args);
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap(), out.status.success())
}

/// `rtfprof <args>`: stdout and stderr (UTF-8) and the exit code, -1 when
/// killed by a signal.
pub fn rtfprof_code<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (String, String, i32) {
    let out = rtfprof_output(args);
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap(), out.status.code().unwrap_or(-1))
}

/// `rtfprof <args>`'s stdout (UTF-8); fails the test, printing stderr, if
/// the command fails.
pub fn rtfprof_stdout<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let out = rtfprof_output(args);
    assert!(out.status.success(), "rtfprof {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// `rtfprof <args> --output=<kind>:outfile=…`: the file it wrote; fails the
/// test, printing stderr, if the command fails.
pub fn rtfprof_outfile<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(args: &[S], kind: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = rtfprof_command().args(args).arg(format!("--output={kind}:outfile={}", out.display())).output().expect("run rtfprof");
    assert!(output.status.success(), "rtfprof {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// The JSON an HTML page of `report` or `diff` embeds (`<script
/// type="application/json" id="rtfprof-data">`).
pub fn page_data(html: &str) -> Result<serde_json::Value, String> {
    let open = r#"<script type="application/json" id="rtfprof-data">"#;
    let start = html.find(open).ok_or("the page has no rtfprof-data element")? + open.len();
    let end = start + html[start..].find("</script>").ok_or("the rtfprof-data element is not closed")?;
    serde_json::from_str(&html[start..end]).map_err(|e| format!("the page's data is not JSON: {e}"))
}
