//! `rtfprof capture` against profiler servers that stand in for a job's
//! (tonic's server, generated from the same vendored schema, in this
//! process): a trace lands where XProf reads it, byte for byte as the
//! server sent it, and its steps are `rtfprof steps`' of that file; each
//! failure (no server, a deadline, an empty trace, a server error, one host
//! of two) is one line naming the address, with exit status 1 and no file
//! for that host. Ctrl-C (SIGINT sent to the process) keeps what arrived
//! and exits 130. A real JAX job is captured in python/tests/test_capture.py.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rtfprof_capture::proto::profiler_service_server::{ProfilerService, ProfilerServiceServer};
use rtfprof_capture::proto::{
    ContinuousProfilingResponse, GetSnapshotRequest, MonitorRequest, MonitorResponse, ProfileRequest, ProfileResponse, StopContinuousProfilingRequest,
    StopContinuousProfilingResponse, TerminateRequest, TerminateResponse,
};
use tonic::{Request, Response, Status};

use crate::common;

/// What a stand-in server answers to `Profile`.
#[derive(Clone)]
enum Answer {
    /// This XSpace.
    Trace(Vec<u8>),
    /// A response saying the trace is empty.
    Empty,
    /// Nothing until this long has passed, then an empty trace.
    Stall(Duration),
    /// This error.
    Fail(Status),
}

/// A stand-in profiler server: it answers `Profile` with its [`Answer`] and
/// keeps the requests it got.
#[derive(Clone)]
struct Server {
    answer: Answer,
    requests: Arc<Mutex<Vec<ProfileRequest>>>,
}

#[tonic::async_trait]
impl ProfilerService for Server {
    async fn profile(&self, request: Request<ProfileRequest>) -> Result<Response<ProfileResponse>, Status> {
        self.requests.lock().unwrap().push(request.into_inner());
        let empty = ProfileResponse { empty_trace: true, ..Default::default() };
        match &self.answer {
            Answer::Trace(xspace) => Ok(Response::new(ProfileResponse { xspace: xspace.clone().into(), ..Default::default() })),
            Answer::Empty => Ok(Response::new(empty)),
            Answer::Stall(time) => {
                tokio::time::sleep(*time).await;
                Ok(Response::new(empty))
            }
            Answer::Fail(status) => Err(status.clone()),
        }
    }
    async fn terminate(&self, _: Request<TerminateRequest>) -> Result<Response<TerminateResponse>, Status> {
        Err(Status::unimplemented(""))
    }
    async fn monitor(&self, _: Request<MonitorRequest>) -> Result<Response<MonitorResponse>, Status> {
        Err(Status::unimplemented(""))
    }
    async fn start_continuous_profiling(&self, _: Request<ProfileRequest>) -> Result<Response<ContinuousProfilingResponse>, Status> {
        Err(Status::unimplemented(""))
    }
    async fn stop_continuous_profiling(&self, _: Request<StopContinuousProfilingRequest>) -> Result<Response<StopContinuousProfilingResponse>, Status> {
        Err(Status::unimplemented(""))
    }
    async fn get_snapshot(&self, _: Request<GetSnapshotRequest>) -> Result<Response<ProfileResponse>, Status> {
        Err(Status::unimplemented(""))
    }
}

/// A running stand-in server: its address and the requests it got. It
/// serves until the test process ends.
struct Running {
    address: String,
    requests: Arc<Mutex<Vec<ProfileRequest>>>,
}

fn serve(answer: Answer) -> Running {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let server = Server { answer, requests: requests.clone() };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            let service = ProfilerServiceServer::new(server).max_encoding_message_size(usize::MAX);
            tonic::transport::Server::builder().add_service(service).serve_with_incoming(incoming).await.unwrap();
        });
    });
    Running { address, requests }
}

/// An address where nothing listens (a port just given up).
fn nothing_listening() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address: SocketAddr = listener.local_addr().unwrap();
    drop(listener);
    address.to_string()
}

/// testdata's JAX trace, which the stand-in serves.
fn trace() -> PathBuf {
    common::testdata().join("xplane/jax_jit/plugins/profile/run0/host0.xplane.pb")
}

fn capture(addresses: &[&str], logdir: &Path, more: &[&str]) -> common::Run {
    common::rtfprof(["capture", "--service_addr", &addresses.join(","), "--duration_ms", "100", "--logdir"]).arg(logdir).args(more).run()
}

/// The run directories under `logdir` and the files in each.
fn runs(logdir: &Path) -> Vec<(String, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(logdir.join("plugins/profile")) else { return Vec::new() };
    let mut runs: Vec<_> = entries
        .map(|e| {
            let e = e.unwrap();
            let mut files: Vec<_> = std::fs::read_dir(e.path()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
            files.sort();
            (e.file_name().into_string().unwrap(), files)
        })
        .collect();
    runs.sort();
    runs
}

fn file_name(address: &str) -> String {
    format!("{}.xplane.pb", address.replace(':', "_"))
}

#[test]
fn a_trace_lands_where_xprof_reads_it_and_its_steps_are_shown() {
    let xspace = std::fs::read(trace()).unwrap();
    let server = serve(Answer::Trace(xspace.clone()));
    let logdir = tempfile::tempdir().unwrap();
    let run = capture(&[&server.address], logdir.path(), &["--host_tracer_level", "3", "--python_tracer_level", "1"]).ok();
    let runs = runs(logdir.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    let (name, files) = &runs[0];
    assert_eq!(files, &[file_name(&server.address)]);
    // (XProf's run names: the local time, YYYY_MM_DD_HH_MM_SS.)
    assert_eq!(name.split('_').map(str::len).collect::<Vec<_>>(), [4, 2, 2, 2, 2, 2], "{name}");
    let saved = logdir.path().join("plugins/profile").join(name).join(&files[0]);
    assert!(std::fs::read(&saved).unwrap() == xspace, "the file is not the server's XSpace");
    // What it printed: the run, then `steps` of the saved file.
    let steps = common::rtfprof(["steps", "--xplane_path"]).arg(&saved).stdout();
    let run_dir = logdir.path().join("plugins/profile").join(name);
    assert_eq!(run.stdout_str(), format!("Captured 1 host of 1 host in {}\n{steps}", run_dir.display()));
    assert!(steps.contains("Step"), "{steps}");
    // The request: XProf's, with the XSpace in the response.
    let requests = server.requests.lock().unwrap();
    let [request] = &requests[..] else { panic!("{} requests", requests.len()) };
    assert!(request.emit_xspace);
    assert_eq!((&request.session_id, &request.host_name, request.duration_ms), (name, &server.address, 100));
    let opts = request.opts.as_ref().unwrap();
    assert_eq!((opts.version, opts.duration_ms, opts.host_tracer_level, opts.device_tracer_level, opts.python_tracer_level), (1, 100, 3, 1, 1));
}

#[test]
fn steps_output_flags_apply_to_the_capture() {
    let server = serve(Answer::Trace(std::fs::read(trace()).unwrap()));
    let logdir = tempfile::tempdir().unwrap();
    let json = logdir.path().join("steps.json");
    capture(&[&server.address], logdir.path(), &[&format!("--output=json:outfile={}", json.display())]).ok();
    let saved = trace();
    let expected = common::steps_json("--xplane_path", &saved).unwrap();
    let got: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(got["steps"], expected["steps"]);
}

#[test]
fn repeated_captures_each_get_a_run() {
    let server = serve(Answer::Trace(std::fs::read(trace()).unwrap()));
    let logdir = tempfile::tempdir().unwrap();
    let run = capture(&[&server.address], logdir.path(), &["--count", "2", "--interval_s", "0"]).ok();
    let runs = runs(logdir.path());
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(run.stdout_str().matches("Captured 1 host of 1 host in ").count(), 2, "{}", run.stdout_str());
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

/// A capture that must fail with one line naming `address` that contains
/// `says`, exit status 1, and leave no run behind.
#[track_caller]
fn fails(run: common::Run, logdir: &Path, address: &str, says: &str) {
    assert_eq!(run.exit_code(), 1, "{run:?}");
    let stderr = run.stderr_str();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("capture {address}: ")) && stderr.contains(says), "{stderr}");
    assert_eq!(runs(logdir), []);
    assert_eq!(run.stdout_str(), "");
}

#[test]
fn no_server_is_one_line() {
    let address = nothing_listening();
    let logdir = tempfile::tempdir().unwrap();
    fails(capture(&[&address], logdir.path(), &[]), logdir.path(), &address, "no profiler server answers (Connection refused");
}

#[test]
fn a_stalled_server_meets_the_deadline() {
    let server = serve(Answer::Stall(Duration::from_secs(30)));
    let logdir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let run = capture(&[&server.address], logdir.path(), &["--timeout_ms", "500"]);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    fails(run, logdir.path(), &server.address, "no trace within 500 ms");
}

#[test]
fn an_empty_trace_says_why_it_usually_is() {
    let server = serve(Answer::Empty);
    let logdir = tempfile::tempdir().unwrap();
    fails(
        capture(&[&server.address], logdir.path(), &[]),
        logdir.path(),
        &server.address,
        "the trace is empty: usually nothing ran in the job during the 100 ms",
    );
}

#[test]
fn a_server_error_is_passed_on() {
    let server = serve(Answer::Fail(Status::internal("Profiler is already\nrunning")));
    let logdir = tempfile::tempdir().unwrap();
    fails(capture(&[&server.address], logdir.path(), &[]), logdir.path(), &server.address, "the server failed (Internal): Profiler is already running");
}

#[test]
fn one_host_of_two_failing_keeps_the_other() {
    let server = serve(Answer::Trace(std::fs::read(trace()).unwrap()));
    let absent = nothing_listening();
    let logdir = tempfile::tempdir().unwrap();
    let run = capture(&[&server.address, &absent], logdir.path(), &[]);
    assert_eq!(run.exit_code(), 1, "{run:?}");
    assert_eq!(run.stderr_str().lines().count(), 1, "{run:?}");
    assert!(run.stderr_str().contains(&format!("capture {absent}: no profiler server answers")), "{run:?}");
    let runs = runs(logdir.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].1, [file_name(&server.address)]);
    assert!(run.stdout_str().starts_with("Captured 1 host of 2 hosts in "), "{run:?}");
    assert!(run.stdout_str().contains("Step"), "{run:?}");
}

#[test]
fn bad_addresses_are_usage_errors() {
    let logdir = tempfile::tempdir().unwrap();
    for address in ["localhost", "localhost:http", "grpc://localhost:1234"] {
        let run = capture(&[address], logdir.path(), &[]);
        assert_eq!(run.exit_code(), 2, "{run:?}");
        assert!(run.stderr_str().contains(&format!("--service_addr: '{address}' is not HOST:PORT")), "{run:?}");
    }
    let run = common::rtfprof(["capture", "--logdir", "x"]).run();
    assert_eq!(run.exit_code(), 2, "{run:?}");
    assert_eq!(runs(logdir.path()), []);
}

/// `rtfprof capture` started with its output piped, to be sent Ctrl-C.
fn spawn_capture(addresses: &[&str], logdir: &Path, more: &[&str]) -> std::process::Child {
    let mut command = common::rtfprof(["capture", "--service_addr", &addresses.join(","), "--duration_ms", "100", "--logdir"]).arg(logdir).args(more).command();
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.spawn().unwrap()
}

/// Waits (30 s at most) until `done` holds.
#[track_caller]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "no {what} after 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGINT, as Ctrl-C in a terminal sends it.
fn ctrl_c(child: &std::process::Child) {
    // SAFETY: kill(2) on the child's pid, which it still is (not yet waited for).
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
}

#[test]
fn ctrl_c_keeps_the_hosts_that_answered() {
    let xspace = std::fs::read(trace()).unwrap();
    let fast = serve(Answer::Trace(xspace.clone()));
    let slow = serve(Answer::Stall(Duration::from_secs(60)));
    let logdir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let child = spawn_capture(&[&fast.address, &slow.address], logdir.path(), &[]);
    wait_until("trace from the fast host", || runs(logdir.path()).iter().any(|(_, files)| files.contains(&file_name(&fast.address))));
    wait_until("request to the slow host", || !slow.requests.lock().unwrap().is_empty());
    ctrl_c(&child);
    let output = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "it waited for the slow host: {:?}", started.elapsed());
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(130), "{stdout}{stderr}");
    // The fast host's trace whole, nothing of the slow host's (no
    // temporary file either), no steps table: one line says it all.
    let runs = runs(logdir.path());
    let [(name, files)] = &runs[..] else { panic!("{runs:?}") };
    assert_eq!(files, &[file_name(&fast.address)]);
    let run_dir = logdir.path().join("plugins/profile").join(name);
    assert!(std::fs::read(run_dir.join(&files[0])).unwrap() == xspace, "the fast host's file is not its XSpace");
    assert_eq!(stdout, "");
    assert_eq!(stderr, format!("rtfprof: capture: interrupted (Ctrl-C); kept {} (1 host of 2 hosts); no trace from {}\n", run_dir.display(), slow.address));
}

#[test]
fn ctrl_c_between_captures_keeps_the_runs_taken() {
    let server = serve(Answer::Trace(std::fs::read(trace()).unwrap()));
    let logdir = tempfile::tempdir().unwrap();
    let mut child = spawn_capture(&[&server.address], logdir.path(), &["--count", "3", "--interval_s", "60"]);
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reading = printed.clone();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut chunk) {
            reading.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    // Its first run and steps table printed, it waits for the second.
    wait_until("first run", || runs(logdir.path()).len() == 1);
    let run_dir = logdir.path().join("plugins/profile").join(&runs(logdir.path())[0].0);
    let steps = common::rtfprof(["steps", "--xplane_path"]).arg(trace()).stdout();
    let expected = format!("Captured 1 host of 1 host in {}\n{steps}", run_dir.display());
    wait_until("steps table", || *printed.lock().unwrap() == expected.as_bytes());
    ctrl_c(&child);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(*printed.lock().unwrap() == expected.as_bytes(), "it printed more");
    assert_eq!(stderr, format!("rtfprof: capture: interrupted (Ctrl-C) before capture 2 of 3; kept {} (1 host of 1 host)\n", run_dir.display()));
    assert_eq!(runs(logdir.path()).len(), 1);
    assert_eq!(server.requests.lock().unwrap().len(), 1);
}

#[test]
fn a_trace_without_steps_is_saved_and_said() {
    // (Keras' fit with its batches marked as its TensorBoard callback marks
    // them, without `_r=1`: no steps for XProf either. A JAX loop without
    // StepTraceAnnotation has none on CPU.)
    let no_steps = common::testdata().join("xplane/keras_fit/plugins/profile/run0/host0.xplane.pb");
    let server = serve(Answer::Trace(std::fs::read(no_steps).unwrap()));
    let logdir = tempfile::tempdir().unwrap();
    let run = capture(&[&server.address], logdir.path(), &["--count", "2"]);
    assert_eq!(run.exit_code(), 0, "{run:?}");
    let runs = runs(logdir.path());
    assert_eq!(runs.len(), 2, "{runs:?}");
    let run_dirs: Vec<PathBuf> = runs.iter().map(|(name, _)| logdir.path().join("plugins/profile").join(name)).collect();
    let said = |dir: &PathBuf| format!("Captured 1 host of 1 host in {}\n", dir.display());
    assert_eq!(run.stdout_str(), run_dirs.iter().map(said).collect::<String>());
    let stderr = run.stderr_str();
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    for (line, dir) in stderr.lines().zip(&run_dirs) {
        assert!(line.starts_with(&format!("{}: the trace has no steps: no step markers", dir.display())), "{line}");
    }
}

/// The library's interruptible session (what Python's `rtfprof.capture`
/// runs on another thread while its main thread watches for Ctrl-C): an
/// interrupt from another thread ends the wait for a stalled host and keeps
/// the trace that arrived.
#[test]
fn an_interrupt_from_another_thread_keeps_the_hosts_that_answered() {
    let xspace = std::fs::read(trace()).unwrap();
    let fast = serve(Answer::Trace(xspace.clone()));
    let slow = serve(Answer::Stall(Duration::from_secs(60)));
    let logdir = tempfile::tempdir().unwrap();
    let (session, interrupt) = rtfprof_capture::Session::interruptible().unwrap();
    let mut options = rtfprof_capture::Options::default();
    options.duration_ms = 100;
    let started = Instant::now();
    let addresses = [fast.address.clone(), slow.address.clone()];
    let taken = std::thread::scope(|scope| {
        let capturing = scope.spawn(|| session.capture(&addresses, logdir.path(), &options));
        wait_until("trace from the fast host", || runs(logdir.path()).iter().any(|(_, files)| files.contains(&file_name(&fast.address))));
        wait_until("request to the slow host", || !slow.requests.lock().unwrap().is_empty());
        interrupt.interrupt();
        capturing.join().unwrap().unwrap()
    });
    assert!(started.elapsed() < Duration::from_secs(20), "it waited for the slow host: {:?}", started.elapsed());
    assert!(session.interrupted());
    assert_eq!(taken.saved().map(|p| std::fs::read(p).unwrap()).collect::<Vec<_>>(), [xspace]);
    let failed: Vec<(&str, String)> = taken.failed().map(|(address, e)| (address, e.to_string())).collect();
    assert_eq!(failed, [(slow.address.as_str(), "no trace: Ctrl-C came before it".to_owned())]);
}
