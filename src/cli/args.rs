//! The command line's flags and subcommands, as clap derives them, with
//! tfprof's spellings, and how they become the library's `Sources` and
//! `Options`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::help::ROOT_EXAMPLES;
use crate::capture::defaults as capture_defaults;
use crate::error::Result;
use crate::inputs::InputPaths;
use crate::inputs::pytorch::windows::{Budget, Windowing};
use crate::inputs::selection::EventSelection;
use crate::load::{Purpose, Sources};
use crate::show::options::{Options, Output, RegexList, Select, defaults};
use crate::views::View;

/// rtfprof: where a training step's time and memory go. Reads TensorFlow's
/// tfprof inputs (GraphDef, RunMetadata, OpLog, ProfileProto, checkpoints,
/// TensorBoard event files) and prints tfprof's views byte for byte, and reads
/// TF2/JAX profiler traces (XPlane, CPU, GPU or TPU) with XProf's numbers.
#[derive(Debug, Parser)]
#[command(name = "rtfprof", version, max_term_width = 100, after_help = ROOT_EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub inputs: InputArgs,
    #[command(flatten)]
    pub show: ShowArgs,
}

#[derive(Clone, Debug, Subcommand)]
pub enum Command {
    /// Nodes organized by name scope, like a file system.
    Scope,
    /// Nodes organized by graph edges: each node's children are its inputs.
    Graph,
    /// Nodes aggregated by op type (MatMul, Conv2D, …).
    Op,
    /// Nodes organized by the Python call stacks that created them.
    ///
    /// Needs code traces: TF's in --op_log_path or the profile, JAX's in
    /// the XLA programs of an XPlane trace.
    Code,
    /// Run tfprof's checkers and print their advice (view options are ignored).
    Advise,
    /// Compare two profiles (or two steps, or two saved tfprof outputs) node
    /// by node on one metric.
    Diff(Box<DiffArgs>),
    /// Summarize each --job: nodes, steps, step time, busiest devices.
    Jobs,
    /// Bytes in use over a step, each allocator's peak and who holds it.
    ///
    /// Replays the allocation records: each allocator's bytes in use over the
    /// step, its peak, and the nodes holding live bytes at the peak (as a
    /// scope tree; --output json:outfile=PATH for the curves).
    Memory,
    /// One self-contained HTML page of the profile.
    ///
    /// Written with --output html:outfile=PATH: flame charts of the scope and
    /// code views, the op view as a table, step times and how nodes vary
    /// across steps, memory, and a trace's HLO ops and kernels. --max_depth
    /// has no limit here unless given.
    Report,
    /// Each step's time split into XProf's categories.
    ///
    /// The categories: device compute, device to device, collectives, host
    /// compute, kernel launch, input, output, compilation, other; with mean,
    /// std and CV (--output json:outfile=PATH or csv:outfile=PATH for the
    /// numbers).
    Steps,
    /// The ranks of a distributed job side by side, and its stragglers.
    ///
    /// A directory of PyTorch traces (--pytorch_path, one a rank) or of
    /// XPlane hosts (--xplane_path): per rank its step times (mean, std, CV,
    /// each step), compute, communication, idle, copies, HTA's
    /// communication/compute overlap; stragglers by a stated rule
    /// (--output json:outfile=PATH or csv:outfile=PATH for the numbers).
    Ranks,
    /// XLA instructions that ran (XProf's hlo_stats).
    ///
    /// Per instruction: program, category, framework op, occurrences, total
    /// and self time, longest first (XPlane traces; --max_depth N shows N
    /// rows).
    Hlo,
    /// GPU kernels (XProf's kernel_stats).
    ///
    /// Per kernel: launch configuration and op, occurrences, total, min and
    /// max duration, longest first (XPlane and PyTorch traces; --max_depth N
    /// shows N rows).
    Kernels,
    /// Reduce the inputs to a partial profile, to merge with others.
    ///
    /// A compact, versioned file (PATH, conventionally NAME.rtfprof) with the
    /// node model the views read, one job a rank or host: make one where
    /// each trace lies, then show them together with --partial_path (any
    /// order or grouping gives the same bytes, and the views of --job).
    Partial(PartialArgs),
    /// Fail on a performance regression: compare two runs step by step.
    ///
    /// BASELINE and NEW are traces (XPlane, PyTorch; the kind is read from
    /// the file) or a baseline saved with --save_baseline, or give them with
    /// the --left_* (baseline) and --right_* (new) flags. Step time, the
    /// step breakdown and each op taking at least 1% of a step are compared
    /// on their per-step samples: a metric regresses when its median grows
    /// past its threshold and a one-sided Mann-Whitney U test says it grew.
    /// A side may be several runs of the program (BASELINE... NEW, or
    /// --new NEW...): their steps are pooled, and a change must besides
    /// hold from the slowest baseline run to the fastest new one.
    /// Exit status: 0 no regression, 1 a regression, 2 bad input or usage.
    #[command(override_usage = "rtfprof check [OPTIONS] BASELINE... NEW\n       rtfprof check [OPTIONS] [BASELINE]... --new NEW...")]
    Check(Box<CheckArgs>),
    /// Write a smaller trace of the steps asked for (PyTorch, TF2 and JAX
    /// traces).
    ///
    /// PyTorch: the events of ProfilerStep#A to #B, their GPU work and the
    /// trace's metadata, byte for byte, for tools that cannot open the whole
    /// trace (HTA, Perfetto, TensorBoard); a name ending in .gz is written
    /// gzipped. XPlane (one host's file): steps A to B as `rtfprof steps`
    /// numbers them (or --time_ms), every event overlapping their time and
    /// every other field byte for byte, the planes of devices --devices
    /// does not list left out, as an .xplane.pb that XProf opens. Streamed, in
    /// memory that does not grow with the trace. What to keep: --steps or
    /// --time_ms, and --devices and --min_dur_us.
    Cut(CutArgs),
    /// Capture a trace from running jobs' profiler servers, then show its steps.
    ///
    /// Asks each --service_addr (started in the job with
    /// jax.profiler.start_server(PORT) or
    /// tf.profiler.experimental.server.start(PORT)) for --duration_ms of
    /// trace, all at once, and saves each host's as
    /// LOGDIR/plugins/profile/RUN/HOST_PORT.xplane.pb, where TensorBoard and
    /// XProf read it (RUN: the local time, YYYY_MM_DD_HH_MM_SS); then prints
    /// the steps table of what was captured (--output as for `steps`). A host
    /// that fails is named on one line; the others are saved; the exit status
    /// is then 1. Ctrl-C while it waits for traces (or for the next of
    /// --count captures) ends it: the traces that arrived are kept, one line
    /// names the runs kept and the hosts that had not answered, and the exit
    /// status is 130.
    Capture(Box<CaptureArgs>),
    /// Print a shell completion script.
    ///
    /// rtfprof completions bash >
    /// ~/.local/share/bash-completion/completions/rtfprof (also zsh, fish,
    /// elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print rtfprof's man page (roff).
    Man,
}

/// `rtfprof partial`: where to write the partial and its job's name.
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct PartialArgs {
    /// The partial profile to write.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub outfile: PathBuf,
    /// The job (rank, host) name of a single input (default: its file's
    /// name without .pt.trace.json, .xplane.pb, …).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// `rtfprof capture`: which servers, for how long, where to save.
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct CaptureArgs {
    /// The profiler servers, HOST:PORT, comma-separated (one host each).
    #[arg(long, value_name = "HOST:PORT,...", value_delimiter = ',', required = true)]
    pub service_addr: Vec<String>,
    /// How long to trace, in ms.
    #[arg(long, value_name = "MS", default_value_t = capture_defaults::DURATION_MS)]
    pub duration_ms: u64,
    /// The log directory: runs go to LOGDIR/plugins/profile/RUN.
    #[arg(long, value_name = "LOGDIR")]
    pub logdir: PathBuf,
    /// Host (TraceMe) tracer level: 0 off, 1 user annotations, 2 and the
    /// framework's ops, 3 everything.
    #[arg(long, value_name = "N", default_value_t = capture_defaults::HOST_TRACER_LEVEL)]
    pub host_tracer_level: u32,
    /// Device (GPU, TPU) tracer level: 0 off, 1 on.
    #[arg(long, value_name = "N", default_value_t = capture_defaults::DEVICE_TRACER_LEVEL)]
    pub device_tracer_level: u32,
    /// Python tracer level: 0 off, 1 on (slows the job down).
    #[arg(long, value_name = "N", default_value_t = capture_defaults::PYTHON_TRACER_LEVEL)]
    pub python_tracer_level: u32,
    /// How long the servers wait before they start tracing, in ms.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
    /// The most to wait for a host's trace, in ms (default: the delay, twice
    /// the duration and 20 s).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Take this many captures, one run each.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Seconds from the end of one capture to the start of the next.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub interval_s: f64,
}

impl CaptureArgs {
    /// The library's options (the run named by the time of each capture).
    pub fn options(&self) -> crate::capture::Options {
        let mut options = crate::capture::Options::default();
        options.duration_ms = self.duration_ms;
        options.delay_ms = self.delay_ms;
        options.host_tracer_level = self.host_tracer_level;
        options.device_tracer_level = self.device_tracer_level;
        options.python_tracer_level = self.python_tracer_level;
        options.timeout_ms = self.timeout_ms;
        options
    }
}

/// `rtfprof cut`: where to write the cut. What it keeps is the selection
/// flags' (`--steps`, `--time_ms`, `--devices`, `--min_dur_us`), which
/// select a timeline's events too ([`ShowArgs`]).
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct CutArgs {
    /// The trace to write (a PyTorch trace gzipped if the name ends in .gz;
    /// an XPlane trace plain).
    #[arg(short = 'o', long, value_name = "PATH")]
    pub outfile: PathBuf,
}

/// `rtfprof check`: the two profiles and the thresholds.
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct CheckArgs {
    /// BASELINE... NEW: the baseline's runs (one or more) and the new run,
    /// last; every one the baseline's when --new or --right_* gives the
    /// new run. Each a trace file or directory, or a file saved with
    /// --save_baseline (instead of the --left_* flags).
    #[arg(value_name = "PROFILE")]
    pub profiles: Vec<PathBuf>,
    /// The new run's profiles, when it is several runs of the program
    /// (the rest are BASELINE...); with --save_baseline and no baseline,
    /// they are saved as one baseline of several runs.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub new: Vec<PathBuf>,
    #[command(flatten)]
    pub sides: SideArgs,
    /// A rules file (TOML): thresholds by regex, budgets on the new run,
    /// metrics to ignore, and defaults for the flags below, which override
    /// it where given (docs/book/src/commands/check.md, "Rules file").
    #[arg(long, value_name = "PATH")]
    pub rules: Option<PathBuf>,
    /// Largest growth of the median step time that passes (5% or 0.05)
    /// [default: 5%].
    #[arg(long, value_name = "AMOUNT")]
    pub max_regression: Option<String>,
    /// Largest growth of an op's or a breakdown category's median that
    /// passes [default: 8%].
    #[arg(long, value_name = "AMOUNT")]
    pub max_op_regression: Option<String>,
    /// Largest growth of an allocator's median peak memory that passes
    /// [default: 5%].
    #[arg(long, value_name = "AMOUNT")]
    pub max_memory_regression: Option<String>,
    /// Fewest bytes an allocator's median peak memory must grow by to
    /// regress (4MiB, 100MB, or bytes) [default: 4MiB].
    #[arg(long, value_name = "BYTES")]
    pub min_memory_change: Option<String>,
    /// A threshold for one metric, as the outputs name it: step_time=3%,
    /// category:host_compute=10%, memory:cpu=10%, op:NAME=20% (repeatable).
    #[arg(long, value_name = "METRIC=AMOUNT")]
    pub threshold: Vec<String>,
    /// Significance level of the one-sided Mann-Whitney U test
    /// [default: 0.01].
    #[arg(long, value_name = "P")]
    pub alpha: Option<f64>,
    /// Fewest steps each side needs; with fewer, nothing is judged (and
    /// the check passes, saying so) [default: 5].
    #[arg(long, value_name = "N")]
    pub min_steps: Option<usize>,
    /// Smallest share of the step time an op or category needs to be
    /// judged [default: 1%].
    #[arg(long, value_name = "AMOUNT")]
    pub min_share: Option<String>,
    /// Least growth of an op, kernel, category or rank's communication, as
    /// a share of the baseline's median step time, for it to fail (2% or
    /// 0.02) [default: the step time's threshold].
    #[arg(long, value_name = "AMOUNT")]
    pub min_part_growth: Option<String>,
    /// Also write the new run's per-step samples to PATH (small JSON), to
    /// give as BASELINE later. With one side given (one PROFILE, or
    /// --new's runs), only that is done.
    #[arg(long, value_name = "PATH")]
    pub save_baseline: Option<PathBuf>,
}

/// `rtfprof diff`: each side is profile inputs (the `--left_*`/`--right_*`
/// flags, else the global input flags) at a step, or a saved tfprof text
/// output. With no right-side inputs, the right side is the left inputs at
/// `--right_step`.
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct DiffArgs {
    #[command(flatten)]
    pub sides: SideArgs,
    /// Step of the left side (default: --step).
    #[arg(long, allow_negative_numbers = true)]
    pub left_step: Option<i64>,
    /// A saved tfprof scope/graph/code output as the left side.
    #[arg(long, value_name = "PATH")]
    pub left_text: Option<PathBuf>,
    /// Step of the right side (default: --step).
    #[arg(long, allow_negative_numbers = true)]
    pub right_step: Option<i64>,
    /// A saved tfprof scope/graph/code output as the right side.
    #[arg(long, value_name = "PATH")]
    pub right_text: Option<PathBuf>,
    /// The view to compare: scope, graph or code.
    #[arg(long, default_value = "scope")]
    pub view: String,
    /// bytes, peak_bytes, residual_bytes, output_bytes, micros,
    /// accelerator_micros, cpu_micros, params, float_ops or occurrence
    /// [default: micros where a side is a trace, which records no bytes per
    /// op; else bytes].
    #[arg(long)]
    pub metric: Option<String>,
    /// Least relative difference |left - right| / max(left, right) to list.
    #[arg(long, default_value_t = 0.1)]
    pub delta: f64,
    /// Least size on either side to list (e.g. 1MB, 10ms, 2.5k).
    #[arg(long, default_value = "0")]
    pub min_size: String,
    /// Names of the two sides in the report.
    #[arg(long, default_value = "left,right")]
    pub names: String,
}

/// The two sides' input flags, `--left_*` and `--right_*`, as `diff` and
/// `check` read them.
#[derive(Clone, Debug, Default, Args)]
#[command(rename_all = "snake_case")]
pub struct SideArgs {
    /// Left side: GraphDef file.
    #[arg(long, value_name = "PATH")]
    pub left_graph_path: Option<PathBuf>,
    /// Left side: RunMetadata files, comma-separated.
    #[arg(long, value_name = "PATHS")]
    pub left_run_meta_path: Option<String>,
    /// Left side: OpLogProto file.
    #[arg(long, value_name = "PATH")]
    pub left_op_log_path: Option<PathBuf>,
    /// Left side: ProfileProto file.
    #[arg(long, value_name = "PATH")]
    pub left_profile_path: Option<PathBuf>,
    /// Left side: TensorBoard event file or log directory.
    #[arg(long, value_name = "PATH")]
    pub left_events_path: Option<PathBuf>,
    /// Left side: TF2/JAX trace (as --xplane_path; a run directory's hosts
    /// are merged as jobs).
    #[arg(long, value_name = "PATH")]
    pub left_xplane_path: Option<PathBuf>,
    /// Left side: PyTorch trace (as --pytorch_path; a directory's ranks are
    /// merged as jobs).
    #[arg(long, value_name = "PATH")]
    pub left_pytorch_path: Option<PathBuf>,
    /// Left side: partial profiles (as --partial_path: files, or
    /// directories of *.rtfprof files; merged).
    #[arg(long, value_name = "PATH")]
    pub left_partial_path: Option<PathBuf>,
    /// Right side: GraphDef file.
    #[arg(long, value_name = "PATH")]
    pub right_graph_path: Option<PathBuf>,
    /// Right side: RunMetadata files, comma-separated.
    #[arg(long, value_name = "PATHS")]
    pub right_run_meta_path: Option<String>,
    /// Right side: OpLogProto file.
    #[arg(long, value_name = "PATH")]
    pub right_op_log_path: Option<PathBuf>,
    /// Right side: ProfileProto file.
    #[arg(long, value_name = "PATH")]
    pub right_profile_path: Option<PathBuf>,
    /// Right side: TensorBoard event file or log directory.
    #[arg(long, value_name = "PATH")]
    pub right_events_path: Option<PathBuf>,
    /// Right side: TF2/JAX trace (as --xplane_path).
    #[arg(long, value_name = "PATH")]
    pub right_xplane_path: Option<PathBuf>,
    /// Right side: PyTorch trace (as --pytorch_path).
    #[arg(long, value_name = "PATH")]
    pub right_pytorch_path: Option<PathBuf>,
    /// Right side: partial profiles (as --partial_path).
    #[arg(long, value_name = "PATH")]
    pub right_partial_path: Option<PathBuf>,
}

impl SideArgs {
    /// One side's inputs (`left`: the `--left_*` flags, else the
    /// `--right_*`) as the loader takes them, read with the global reading
    /// options of `global` (`--events_run`, `--events_tags`,
    /// `--estimate_flops`); empty when none of the side's flags is given.
    pub fn sources(&self, left: bool, global: &InputPaths) -> Sources {
        let pick = |l: &Option<PathBuf>, r: &Option<PathBuf>| if left { l.clone() } else { r.clone() };
        let run_meta = if left { &self.left_run_meta_path } else { &self.right_run_meta_path };
        Sources {
            paths: InputPaths {
                graph_path: pick(&self.left_graph_path, &self.right_graph_path),
                run_meta_paths: run_meta.as_deref().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect(),
                op_log_path: pick(&self.left_op_log_path, &self.right_op_log_path),
                profile_path: pick(&self.left_profile_path, &self.right_profile_path),
                events_path: pick(&self.left_events_path, &self.right_events_path),
                events_run: global.events_run.clone(),
                events_tags: global.events_tags.clone(),
                estimate_flops: global.estimate_flops,
                ..InputPaths::default()
            },
            xplane_path: pick(&self.left_xplane_path, &self.right_xplane_path),
            pytorch_path: pick(&self.left_pytorch_path, &self.right_pytorch_path),
            partial_paths: pick(&self.left_partial_path, &self.right_partial_path).into_iter().collect(),
            ..Sources::default()
        }
    }
}

impl Command {
    /// The commands whose result is an [`outputs::Report`]: whether it has
    /// a CSV form.
    pub(super) fn report_csv(&self) -> Option<bool> {
        match self {
            Command::Memory => Some(false),
            Command::Steps | Command::Capture(_) | Command::Ranks | Command::Hlo | Command::Kernels => Some(true),
            _ => None,
        }
    }

    /// The command's name on the command line.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Command::Scope => "scope",
            Command::Graph => "graph",
            Command::Op => "op",
            Command::Code => "code",
            Command::Advise => "advise",
            Command::Diff(_) => "diff",
            Command::Jobs => "jobs",
            Command::Memory => "memory",
            Command::Report => "report",
            Command::Steps => "steps",
            Command::Ranks => "ranks",
            Command::Hlo => "hlo",
            Command::Kernels => "kernels",
            Command::Partial(_) => "partial",
            Command::Cut(_) => "cut",
            Command::Check(_) => "check",
            Command::Capture(_) => "capture",
            Command::Completions { .. } => "completions",
            Command::Man => "man",
        }
    }

    /// What the command loads its inputs for.
    pub(super) fn purpose(&self) -> Purpose {
        match self {
            Command::Scope => Purpose::View(View::Scope),
            Command::Graph => Purpose::View(View::Graph),
            Command::Op => Purpose::View(View::Op),
            Command::Code => Purpose::View(View::Code),
            Command::Advise => Purpose::Advise,
            Command::Diff(_) => Purpose::Diff,
            Command::Jobs => Purpose::Jobs,
            Command::Memory => Purpose::Memory,
            Command::Report => Purpose::Report,
            Command::Steps | Command::Ranks => Purpose::Steps,
            Command::Hlo | Command::Kernels => Purpose::Tables,
            Command::Partial(_) => Purpose::Partial,
            // (It reads its trace itself; the others read no inputs.)
            Command::Cut(_) => Purpose::Prompt,
            Command::Check(_) | Command::Capture(_) => Purpose::Steps,
            // (They read no inputs.)
            Command::Completions { .. } | Command::Man => Purpose::Prompt,
        }
    }

    /// The view this command shows; `None` for `advise`.
    pub(super) fn view(&self) -> Option<View> {
        match self {
            Command::Scope => Some(View::Scope),
            Command::Graph => Some(View::Graph),
            Command::Op => Some(View::Op),
            Command::Code => Some(View::Code),
            Command::Advise
            | Command::Diff(_)
            | Command::Jobs
            | Command::Memory
            | Command::Report
            | Command::Steps
            | Command::Ranks
            | Command::Hlo
            | Command::Kernels
            | Command::Partial(_)
            | Command::Cut(_)
            | Command::Check(_)
            | Command::Capture(_)
            | Command::Completions { .. }
            | Command::Man => None,
        }
    }
}

/// The input flags; `Default` is none given (for building them in code).
#[derive(Debug, Default, Args)]
#[command(rename_all = "snake_case")]
pub struct InputArgs {
    /// GraphDef file, text (.pbtxt) or binary.
    #[arg(long, global = true, value_name = "PATH")]
    pub graph_path: Option<PathBuf>,
    /// RunMetadata files, comma-separated: the i-th file is step i.
    #[arg(long, global = true, value_name = "PATHS")]
    pub run_meta_path: Option<String>,
    /// OpLogProto file (tfprof_log): float ops, custom op types, code traces.
    #[arg(long, global = true, value_name = "PATH")]
    pub op_log_path: Option<PathBuf>,
    /// Multi-step ProfileProto from tf.profiler.Profiler / ProfileContext
    /// (instead of the three files above).
    #[arg(long, global = true, value_name = "PATH")]
    pub profile_path: Option<PathBuf>,
    /// TensorFlow V2 checkpoint prefix (model.ckpt for model.ckpt.index and
    /// .data-*): variables get op type _checkpoint_variables, and
    /// --select tensor_value prints their values.
    #[arg(long, global = true, value_name = "PREFIX")]
    pub checkpoint_path: Option<PathBuf>,
    /// TensorBoard event file (events.out.tfevents.*) or log directory, as
    /// FileWriter(logdir, sess.graph) and add_run_metadata write them: the
    /// graph, and each run metadata as a step (instead of --graph_path and
    /// --run_meta_path).
    #[arg(long, global = true, value_name = "PATH")]
    pub events_path: Option<PathBuf>,
    /// The run (subdirectory) of the --events_path log directory to read.
    #[arg(long, global = true, value_name = "NAME")]
    pub events_run: Option<String>,
    /// Keep only the run metadata whose tag matches this regex (the whole
    /// tag, e.g. 'step[0-9]*0').
    #[arg(long, global = true, value_name = "REGEX")]
    pub events_tags: Option<String>,
    /// A job to profile with others: NAME=DIR (graph.pb|graph.pbtxt,
    /// run_meta_N, tfprof_log, profile or event files inside), NAME=PROFILE
    /// or NAME=EVENT_FILE. Repeat for each job; nodes become `NAME/<node>`,
    /// devices `/NAME<device>`.
    #[arg(long, global = true, value_name = "NAME=PATH")]
    pub job: Vec<String>,
    /// TF2/JAX profiler trace: a .xplane.pb file, a run directory (each
    /// host's file becomes a job) or a log directory (the newest run under
    /// plugins/profile/).
    #[arg(long, global = true, value_name = "PATH")]
    pub xplane_path: Option<PathBuf>,
    /// The run under the log directory's plugins/profile/ to read (default:
    /// the newest).
    #[arg(long, global = true, value_name = "NAME")]
    pub xplane_run: Option<String>,
    /// PyTorch trace: a *.pt.trace.json or .json.gz as torch.profiler writes
    /// it (export_chrome_trace, tensorboard_trace_handler), or a directory
    /// of them (each rank's file becomes a job).
    #[arg(long, global = true, value_name = "PATH")]
    pub pytorch_path: Option<PathBuf>,
    /// `steps`, `kernels`, `ranks`, `scope`, `op`, `code`, `memory`, `partial`, `report`: read a PyTorch trace about this many MB of JSON
    /// at a time (whole steps, at least one), in memory one such window
    /// bounds; 0 reads it whole. Default: windows of 128 MB for traces over
    /// 1 GB (a .gz counted at ten times its size), else whole.
    #[arg(long, global = true, value_name = "MB", conflicts_with = "window_steps")]
    pub window_mb: Option<u64>,
    /// `steps`, `kernels`, `ranks`, `scope`, `op`, `code`, `memory`, `partial`, `report`: read a PyTorch trace this many steps at a time
    /// (0: whole), instead of by --window_mb.
    #[arg(long, global = true, value_name = "N")]
    pub window_steps: Option<usize>,
    /// Partial profiles made by 'rtfprof partial', comma-separated, or
    /// directories of *.rtfprof files: merged, and shown as --job's are
    /// (one job a rank or host).
    #[arg(long, global = true, value_name = "PATHS", value_delimiter = ',')]
    pub partial_path: Vec<PathBuf>,
    /// Estimate float ops natively for nodes the op log gives none, with the
    /// formulas of TF's flops registry (every op type it knows) plus Einsum;
    /// off by default, as tfprof counts none then. Unlike TF, it also counts
    /// a convolution whose input shape is unknown, or a Mean whose output
    /// shape is (TF asserts these shapes; the formulas do not use them),
    /// e.g. the first Conv2D on a placeholder fed with an unknown batch size.
    #[arg(long, global = true)]
    pub estimate_flops: bool,
    /// Float ops as TF's Python tf.compat.v1.profiler.profile(graph, …)
    /// gives them, which merges a default op log into the one given: TF's
    /// registered flops of every node whose shapes the graph and the run
    /// metadata fully know, where the op log has none (the tfprof command
    /// line, and rtfprof without this flag, read the op log alone).
    #[arg(long, global = true, conflicts_with = "estimate_flops")]
    pub default_op_log: bool,
}

impl InputArgs {
    /// Which float ops are estimated (see [`crate::stats::flops::FlopsEstimate`]).
    pub fn flops_estimate(&self) -> crate::stats::flops::FlopsEstimate {
        use crate::stats::flops::FlopsEstimate;
        match (self.default_op_log, self.estimate_flops) {
            (true, _) => FlopsEstimate::TfDefaultOpLog,
            (false, true) => FlopsEstimate::Missing,
            (false, false) => FlopsEstimate::Off,
        }
    }

    /// The inputs as the library's loader takes them.
    pub fn sources(&self) -> Sources {
        Sources {
            paths: self.paths(),
            xplane_path: self.xplane_path.clone(),
            xplane_run: self.xplane_run.clone(),
            pytorch_path: self.pytorch_path.clone(),
            pytorch_windows: self.windowing(),
            jobs: self.job.clone(),
            partial_paths: self.partial_path.clone(),
            partial_bytes: None,
        }
    }

    /// How `steps` reads PyTorch traces (`--window_mb`, `--window_steps`).
    pub fn windowing(&self) -> Windowing {
        match (self.window_mb, self.window_steps) {
            (Some(0), _) | (_, Some(0)) => Windowing::Whole,
            (Some(mb), _) => Windowing::Windows(Budget::Bytes(mb.saturating_mul(1 << 20))),
            (_, Some(n)) => Windowing::Windows(Budget::Steps(n)),
            (None, None) => Windowing::Auto,
        }
    }

    pub fn paths(&self) -> InputPaths {
        InputPaths {
            graph_path: self.graph_path.clone(),
            run_meta_paths: self.run_meta_path.as_deref().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect(),
            op_log_path: self.op_log_path.clone(),
            profile_path: self.profile_path.clone(),
            checkpoint_path: self.checkpoint_path.clone(),
            // Resolved to one host's (rank's) file, or to jobs, by the loader.
            xplane_path: None,
            pytorch_path: None,
            events_path: self.events_path.clone(),
            events_run: self.events_run.clone(),
            events_tags: self.events_tags.clone(),
            estimate_flops: self.flops_estimate(),
            skip_code_traces: false,
            skip_attrs: false,
            allocations: false,
            hlo_steps: false,
            // Set by the loader, from the sources' windowing.
            pytorch_windows: None,
        }
    }
}

/// The view options, with tfprof's CLI defaults.
#[derive(Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct ShowArgs {
    /// Show nodes at most this deep (the root is depth 1; report: no limit
    /// unless given) [default: 10]
    #[arg(long, global = true, allow_negative_numbers = true)]
    pub max_depth: Option<i64>,
    /// Hide nodes whose total requested bytes are below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_bytes: i64,
    /// Hide nodes whose total peak bytes are below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_peak_bytes: i64,
    /// Hide nodes whose total residual bytes are below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_residual_bytes: i64,
    /// Hide nodes whose total output bytes are below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_output_bytes: i64,
    /// Hide nodes whose total execution time (us) is below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_micros: i64,
    /// Hide nodes whose total accelerator time (us) is below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_accelerator_micros: i64,
    /// Hide nodes whose total cpu time (us) is below this.
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_cpu_micros: i64,
    /// Hide nodes with fewer parameters (own in scope/graph, total in op/code).
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_params: i64,
    /// Hide nodes with fewer float ops (own in scope/graph, total in op/code).
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_float_ops: i64,
    /// Hide nodes that ran fewer times (op view: fewer graph nodes).
    #[arg(long, global = true, default_value_t = defaults::MIN, allow_negative_numbers = true)]
    pub min_occurrence: i64,
    /// Step to show; -1 averages each node over the steps it ran in.
    #[arg(long, global = true, default_value_t = defaults::STEP, allow_negative_numbers = true)]
    pub step: i64,
    /// Sibling order: name, depth (= name, as in tfprof), bytes, peak_bytes,
    /// residual_bytes, output_bytes, micros, accelerator_micros, cpu_micros,
    /// params, float_ops, occurrence.
    #[arg(long, global = true, default_value = defaults::ORDER_BY)]
    pub order_by: String,
    /// Count only nodes with an op type matching one of these regexes.
    #[arg(long, global = true, default_value = defaults::ACCOUNT_TYPE_REGEXES, value_name = "REGEXES")]
    pub account_type_regexes: String,
    /// Start the tree at nodes whose name matches one of these regexes.
    #[arg(long, global = true, default_value = defaults::START_NAME_REGEXES, value_name = "REGEXES")]
    pub start_name_regexes: String,
    /// Do not descend below nodes whose name matches one of these regexes.
    #[arg(long, global = true, default_value = defaults::TRIM_NAME_REGEXES, value_name = "REGEXES")]
    pub trim_name_regexes: String,
    /// Show only nodes whose name matches one of these regexes.
    #[arg(long, global = true, default_value = defaults::SHOW_NAME_REGEXES, value_name = "REGEXES")]
    pub show_name_regexes: String,
    /// Hide nodes whose name matches one of these regexes.
    #[arg(long, global = true, default_value = defaults::HIDE_NAME_REGEXES, value_name = "REGEXES")]
    pub hide_name_regexes: String,
    /// Totals count only displayed nodes: true or false (t/yes/y/1, f/no/n/0
    /// and any case, as tfprof's prompt takes them; alone it means true).
    #[arg(long, global = true, default_value_t = defaults::ACCOUNT_DISPLAYED_OP_ONLY,
          num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = crate::show::options::parse_tfprof_bool)]
    pub account_displayed_op_only: bool,
    /// Columns: bytes, peak_bytes, residual_bytes, output_bytes, micros,
    /// accelerator_micros, cpu_micros, params, float_ops, occurrence, device,
    /// op_types, input_shapes, tensor_value.
    #[arg(long, global = true, default_value = defaults::SELECT)]
    pub select: String,
    /// Where the result goes: stdout, none, file:outfile=PATH, or
    /// timeline:outfile=PATH (Chrome/Perfetto trace written to `PATH_<step>`,
    /// gzipped if PATH ends in .gz; a TF2/JAX trace's events, which
    /// --steps, --time_ms, --devices and --min_dur_us select), or
    /// pprof:outfile=PATH (code view, one --select metric; gzipped pprof),
    /// csv:outfile=PATH or json:outfile=PATH (raw numbers, per-step stats),
    /// folded:outfile=PATH (scope and code views, one time or bytes
    /// --select metric; diff: two columns): collapsed stacks for flame graphs,
    /// html:outfile=PATH (report and diff: one self-contained page);
    /// check: also junit:, markdown:, benchmark:outfile=PATH and github,
    /// and --output may be given several times.
    #[arg(long, global = true, default_value = defaults::OUTPUT, action = clap::ArgAction::Append)]
    pub output: Vec<String>,
    /// Cut and timeline (--output timeline:outfile=PATH of a TF2 or JAX
    /// trace): keep steps N, or A..B (both included), as `rtfprof steps`
    /// numbers them (a PyTorch trace's cut: ProfilerStep#A to #B).
    #[arg(long, global = true, value_name = "A..B", help_heading = "Selection (cut, timelines)")]
    pub steps: Option<String>,
    /// Cut and timeline: or keep A..B milliseconds from the trace's first
    /// event.
    #[arg(long, global = true, value_name = "A..B", help_heading = "Selection (cut, timelines)")]
    pub time_ms: Option<String>,
    /// Cut and timeline: keep only these devices' work (GPU or TPU
    /// numbers, comma-separated); the host's events are all kept.
    #[arg(long, global = true, value_name = "LIST", help_heading = "Selection (cut, timelines)")]
    pub devices: Option<String>,
    /// Cut and timeline: leave out events shorter than this many
    /// microseconds (counted in the summary).
    #[arg(long, global = true, value_name = "US", help_heading = "Selection (cut, timelines)")]
    pub min_dur_us: Option<String>,
}

impl ShowArgs {
    /// Validates every option: regexes compile, select/order_by/output are known.
    pub fn to_options(&self) -> Result<Options> {
        Ok(Options {
            max_depth: self.max_depth.unwrap_or(defaults::MAX_DEPTH),
            min_bytes: self.min_bytes,
            min_peak_bytes: self.min_peak_bytes,
            min_residual_bytes: self.min_residual_bytes,
            min_output_bytes: self.min_output_bytes,
            min_micros: self.min_micros,
            min_accelerator_micros: self.min_accelerator_micros,
            min_cpu_micros: self.min_cpu_micros,
            min_params: self.min_params,
            min_float_ops: self.min_float_ops,
            min_occurrence: self.min_occurrence,
            step: self.step,
            order_by: Options::parse_order_by(&self.order_by)?,
            account_type_regexes: RegexList::parse("account_type_regexes", &self.account_type_regexes)?,
            start_name_regexes: RegexList::parse("start_name_regexes", &self.start_name_regexes)?,
            trim_name_regexes: RegexList::parse("trim_name_regexes", &self.trim_name_regexes)?,
            show_name_regexes: RegexList::parse("show_name_regexes", &self.show_name_regexes)?,
            hide_name_regexes: RegexList::parse("hide_name_regexes", &self.hide_name_regexes)?,
            account_displayed_op_only: self.account_displayed_op_only,
            select: Select::parse(&self.select)?,
            // (Several are check's; elsewhere the last one given wins, as
            // with every tfprof flag.)
            output: Output::parse(self.output.last().map_or(defaults::OUTPUT, String::as_str))?,
            events: EventSelection::parse(self.steps.as_deref(), self.time_ms.as_deref(), self.devices.as_deref(), self.min_dur_us.as_deref())?,
        })
    }

    /// The first selection flag given (`--steps`, …), for the commands
    /// that take none.
    pub fn selection_flag(&self) -> Option<&'static str> {
        [("--steps", &self.steps), ("--time_ms", &self.time_ms), ("--devices", &self.devices), ("--min_dur_us", &self.min_dur_us)]
            .into_iter()
            .find_map(|(flag, value)| value.as_ref().map(|_| flag))
    }
}
