//! What the integration tests share: the fixtures' paths, the one way to
//! run the rtfprof binary ([`rtfprof`]), and failure-message helpers.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

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

/// The rtfprof binary of this build with `args`, the one way the tests run
/// it: add to it with `.arg`, `.args`, `.stdin` (the `tfprof>` prompt's
/// commands; without it stdin is `/dev/null`), `.env`, `.env_remove` and
/// `.current_dir`, then `.run()` for its [`Run`] (stdout, stderr, exit
/// code), or `.stdout()`, `.json()` or `.outfile(kind)` where it must
/// succeed; `.command()` gives the `Command` to a test that drives the
/// process itself.
pub fn rtfprof<I, S>(args: I) -> Rtfprof
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtfprof"));
    command.args(args);
    Rtfprof { command, stdin: None }
}

/// A run of the rtfprof binary being set up ([`rtfprof`]).
pub struct Rtfprof {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Rtfprof {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// `input` piped to stdin, which is then closed.
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// The `Command` (arguments, environment, directory; not stdin), for a
    /// test that spawns the process and reads it as it runs.
    pub fn command(self) -> Command {
        assert!(self.stdin.is_none(), "command() does not pipe stdin; write it to the child");
        self.command
    }

    /// Runs it to the end: its stdout, stderr and exit code.
    pub fn run(self) -> Run {
        let Rtfprof { mut command, stdin } = self;
        let args = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn rtfprof");
        if let Some(input) = stdin {
            // Dropped after the write: the prompt reads to the end of input.
            child.stdin.take().unwrap().write_all(&input).expect("write rtfprof's stdin");
        }
        let output = child.wait_with_output().expect("wait for rtfprof");
        Run { args, stdout: output.stdout, stderr: output.stderr, status: output.status }
    }

    /// Its stdout (UTF-8); fails the test, printing stderr, if the command
    /// fails.
    #[track_caller]
    pub fn stdout(self) -> String {
        self.run().ok().stdout_str().to_owned()
    }

    /// With `--output=json:outfile=…`: the JSON it wrote; fails the test,
    /// printing stderr, if the command fails.
    #[track_caller]
    pub fn json(self) -> serde_json::Value {
        serde_json::from_str(&self.outfile("json")).unwrap()
    }

    /// With `--output=<kind>:outfile=…`: the file it wrote; fails the test,
    /// printing stderr, if the command fails.
    #[track_caller]
    pub fn outfile(self, kind: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        self.arg(format!("--output={kind}:outfile={}", out.display())).run().ok();
        std::fs::read_to_string(out).unwrap()
    }
}

/// What a run of rtfprof printed and how it ended ([`Rtfprof::run`]).
pub struct Run {
    /// Its arguments, for failure messages.
    pub args: Vec<String>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// How it ended: [`Run::code`] is its exit code.
    pub status: ExitStatus,
}

impl Run {
    /// Exited 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The exit code; `None` when a signal killed it.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Fails the test, printing stderr, unless it exited 0.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert!(self.success(), "rtfprof {:?} failed ({}): {}", self.args, self.status, self.stderr_lossy());
        self
    }

    /// The exit code; being killed by a signal fails the test.
    #[track_caller]
    pub fn exit_code(&self) -> i32 {
        self.code().unwrap_or_else(|| panic!("rtfprof {:?} was killed ({}): {}", self.args, self.status, self.stderr_lossy()))
    }

    /// Stdout, which must be UTF-8.
    #[track_caller]
    pub fn stdout_str(&self) -> &str {
        std::str::from_utf8(&self.stdout).unwrap_or_else(|e| panic!("rtfprof {:?}: stdout is not UTF-8: {e}", self.args))
    }

    /// Stderr, which must be UTF-8.
    #[track_caller]
    pub fn stderr_str(&self) -> &str {
        std::str::from_utf8(&self.stderr).unwrap_or_else(|e| panic!("rtfprof {:?}: stderr is not UTF-8: {e}", self.args))
    }

    /// Stdout, invalid UTF-8 replaced.
    pub fn stdout_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stdout)
    }

    /// Stderr, invalid UTF-8 replaced (for failure messages).
    pub fn stderr_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stderr)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rtfprof {:?} ({}): {}", self.args, self.status, self.stderr_lossy())
    }
}

/// `rtfprof steps <flag>=<path>`'s JSON (`--output json:outfile=…`), or the
/// run where it fails (a trace without steps), which wrote no file.
pub fn steps_json(flag: &str, path: &Path) -> Result<serde_json::Value, Run> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("steps.json");
    let run = rtfprof(["steps".to_owned(), format!("{flag}={}", path.display()), format!("--output=json:outfile={}", out.display())]).run();
    if !run.success() {
        assert!(!out.exists(), "{run:?}: an output file");
        return Err(run);
    }
    Ok(serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap())
}

/// The first line where two texts differ, for failure messages: its number
/// and both lines, under `names` (e.g. `["expected", "actual"]`), or both
/// texts' line counts.
pub fn first_difference(left: &str, right: &str, names: [&str; 2]) -> String {
    let width = names[0].len().max(names[1].len()) + 1;
    let label = |name: &str| format!("{:width$}", format!("{name}:"));
    for (i, (l, r)) in left.lines().zip(right.lines()).enumerate() {
        if l != r {
            return format!("line {}:\n  {} {l:?}\n  {} {r:?}", i + 1, label(names[0]), label(names[1]));
        }
    }
    format!("line counts differ: {} {}, {} {}", names[0], left.lines().count(), names[1], right.lines().count())
}

/// The JSON an HTML page of `report` or `diff` embeds (`<script
/// type="application/json" id="rtfprof-data">`).
pub fn page_data(html: &str) -> Result<serde_json::Value, String> {
    let open = r#"<script type="application/json" id="rtfprof-data">"#;
    let start = html.find(open).ok_or("the page has no rtfprof-data element")? + open.len();
    let end = start + html[start..].find("</script>").ok_or("the rtfprof-data element is not closed")?;
    serde_json::from_str(&html[start..end]).map_err(|e| format!("the page's data is not JSON: {e}"))
}
