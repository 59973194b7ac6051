//! The `rtfprof` command line: clap-derived flags with tfprof's spellings
//! (`--flag=v`, `--flag v` and tfprof's single-dash `-flag v`), turned into
//! [`InputPaths`] and [`Options`] before any file is read.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

pub(crate) mod device;
mod diff;
pub mod interactive;
mod memory;
mod ranks;
mod steps;
mod term;

use crate::error::{Error, Result};
use crate::inputs::InputPaths;
use crate::load::{self, Purpose, Sources};
use crate::outputs;
use crate::show::options::{Options, Output, RegexList, Select, defaults};
use crate::stack::with_deep_stack;
use crate::stats::Stats;
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

/// `rtfprof diff`: each side is profile inputs (the `--left_*`/`--right_*`
/// flags, else the global input flags) at a step, or a saved tfprof text
/// output. With no right-side inputs, the right side is the left inputs at
/// `--right_step`.
#[derive(Clone, Debug, Args)]
#[command(rename_all = "snake_case")]
pub struct DiffArgs {
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
    /// Step of the left side (default: --step).
    #[arg(long, allow_negative_numbers = true)]
    pub left_step: Option<i64>,
    /// A saved tfprof scope/graph/code output as the left side.
    #[arg(long, value_name = "PATH")]
    pub left_text: Option<PathBuf>,
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

impl Command {
    /// The commands whose result is an [`outputs::Report`]: whether it has
    /// a CSV form.
    fn report_csv(&self) -> Option<bool> {
        match self {
            Command::Memory => Some(false),
            Command::Steps | Command::Ranks | Command::Hlo | Command::Kernels => Some(true),
            _ => None,
        }
    }

    /// The command's name on the command line.
    fn name(&self) -> &'static str {
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
            Command::Completions { .. } => "completions",
            Command::Man => "man",
        }
    }

    /// What the command loads its inputs for.
    fn purpose(&self) -> Purpose {
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
            // (They read no inputs.)
            Command::Completions { .. } | Command::Man => Purpose::Prompt,
        }
    }

    /// The view this command shows; `None` for `advise`.
    fn view(&self) -> Option<View> {
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
            jobs: self.job.clone(),
            partial_paths: self.partial_path.clone(),
            partial_bytes: None,
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
    /// timeline:outfile=PATH (Chrome/Perfetto trace written to `PATH_<step>`), or
    /// pprof:outfile=PATH (code view, one --select metric; gzipped pprof),
    /// csv:outfile=PATH or json:outfile=PATH (raw numbers, per-step stats),
    /// folded:outfile=PATH (scope and code views, one time or bytes
    /// --select metric; diff: two columns): collapsed stacks for flame graphs,
    /// html:outfile=PATH (report and diff: one self-contained page).
    #[arg(long, global = true, default_value = defaults::OUTPUT)]
    pub output: String,
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
            output: Output::parse(&self.output)?,
        })
    }
}

/// Examples under `rtfprof --help`, and what `rtfprof` alone prints after
/// the usage: one command per kind of input, on the bundled samples.
const ROOT_EXAMPLES: &str = "Examples (from the repository root, on the bundled samples):
  rtfprof scope --profile_path testdata/cnn/profile --select micros,bytes --max_depth 3
  rtfprof op --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros,occurrence --order_by accelerator_micros
  rtfprof steps --xplane_path testdata/xplane/jax_gpu_cnn
  rtfprof report --profile_path testdata/cnn/profile --output html:outfile=report.html

'rtfprof COMMAND --help' lists the flags each command reads.";

/// The input flags, by the files they read.
const TF_INPUTS: &[&str] = &[
    "graph_path",
    "run_meta_path",
    "op_log_path",
    "profile_path",
    "checkpoint_path",
    "events_path",
    "events_run",
    "events_tags",
    "job",
    "estimate_flops",
    "default_op_log",
];
const XPLANE_INPUTS: &[&str] = &["xplane_path", "xplane_run", "pytorch_path"];
/// Partial profiles, which the views, the report and advice read.
const PARTIAL_INPUTS: &[&str] = &["partial_path"];
/// The inputs that hold steps, allocations or timed events (no float ops,
/// code traces or checkpoints).
const RUN_INPUTS: &[&str] =
    &["graph_path", "run_meta_path", "profile_path", "events_path", "events_run", "events_tags", "job", "xplane_path", "xplane_run", "pytorch_path"];
/// Every view option.
const VIEW_OPTIONS: &[&str] = &[
    "max_depth",
    "min_bytes",
    "min_peak_bytes",
    "min_residual_bytes",
    "min_output_bytes",
    "min_micros",
    "min_accelerator_micros",
    "min_cpu_micros",
    "min_params",
    "min_float_ops",
    "min_occurrence",
    "step",
    "order_by",
    "account_type_regexes",
    "start_name_regexes",
    "trim_name_regexes",
    "show_name_regexes",
    "hide_name_regexes",
    "account_displayed_op_only",
    "select",
    "output",
];

/// Each subcommand's help: the global flags it reads (the others are
/// accepted, as tfprof's flags are anywhere, but not listed) and two
/// examples on the bundled samples (tests/integration/cli.rs runs every one).
const SUBCOMMAND_HELP: &[(&str, &[&[&str]], &str)] = &[
    (
        "scope",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof scope --profile_path testdata/cnn/profile --select micros,bytes --max_depth 3
  rtfprof scope --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros --order_by accelerator_micros --max_depth 4",
    ),
    (
        "graph",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof graph --profile_path testdata/cnn/profile --select micros --max_depth 3
  rtfprof graph --graph_path testdata/cnn/graph.pbtxt --run_meta_path testdata/cnn/run_meta_1 --start_name_regexes gradients/.* --max_depth 2",
    ),
    (
        "op",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof op --profile_path testdata/cnn/profile --select micros,occurrence --order_by micros
  rtfprof op --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros,occurrence --order_by accelerator_micros",
    ),
    (
        "code",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof code --profile_path testdata/cnn/profile --select micros --max_depth 4
  rtfprof code --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros --order_by accelerator_micros --output pprof:outfile=cnn.pb.gz",
    ),
    (
        "advise",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS],
        "Examples:
  rtfprof advise --profile_path testdata/cnn/profile
  rtfprof advise --xplane_path testdata/xplane/jax_gpu_cnn",
    ),
    (
        "diff",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof diff --profile_path testdata/cnn/profile --left_step 0 --right_step 2 --metric micros
  rtfprof diff --left_profile_path testdata/cnn/profile --right_profile_path testdata/cnn_b8/profile --metric bytes --output html:outfile=diff.html
  rtfprof diff --left_xplane_path testdata/xplane/jax_gpu_mlp --right_xplane_path testdata/xplane/jax_gpu_mlp_nocb --metric accelerator_micros",
    ),
    (
        "jobs",
        &[&["job", "events_tags"]],
        "Examples:
  rtfprof jobs --job w0=testdata/jobs/worker0 --job cnn=testdata/cnn/profile
  rtfprof scope --job w0=testdata/jobs/worker0 --job cnn=testdata/cnn/profile --max_depth 2",
    ),
    (
        "memory",
        &[RUN_INPUTS, &["step", "output", "max_depth", "min_bytes", "start_name_regexes", "trim_name_regexes", "show_name_regexes", "hide_name_regexes"]],
        "Examples:
  rtfprof memory --profile_path testdata/cnn/profile --step 1 --max_depth 3
  rtfprof memory --xplane_path testdata/xplane/jax_gpu_cnn --output json:outfile=memory.json",
    ),
    (
        "report",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, VIEW_OPTIONS],
        "Examples:
  rtfprof report --profile_path testdata/cnn/profile --output html:outfile=report.html
  rtfprof report --xplane_path testdata/xplane/jax_gpu_cnn --output html:outfile=report.html",
    ),
    (
        "steps",
        &[RUN_INPUTS, &["output"]],
        "Examples:
  rtfprof steps --xplane_path testdata/xplane/jax_gpu_cnn
  rtfprof steps --profile_path testdata/cnn/profile --output csv:outfile=steps.csv",
    ),
    (
        "ranks",
        &[XPLANE_INPUTS, &["output"]],
        "Examples:
  rtfprof ranks --pytorch_path testdata/pytorch/ranks16
  rtfprof ranks --xplane_path testdata/xplane/two_hosts --output json:outfile=ranks.json",
    ),
    (
        "hlo",
        &[XPLANE_INPUTS, &["max_depth", "output"]],
        "Examples:
  rtfprof hlo --xplane_path testdata/xplane/jax_gpu_cnn --max_depth 10
  rtfprof hlo --xplane_path testdata/xplane/jax_gpu_cnn --output csv:outfile=hlo.csv",
    ),
    (
        "kernels",
        &[XPLANE_INPUTS, &["max_depth", "output"]],
        "Examples:
  rtfprof kernels --xplane_path testdata/xplane/jax_gpu_cnn --max_depth 10
  rtfprof kernels --pytorch_path testdata/pytorch/h200_resnet18.steps2-3.pt.trace.json.gz --max_depth 10
  rtfprof kernels --pytorch_path testdata/pytorch/h200_tx.steps2-3.pt.trace.json.gz --output json:outfile=kernels.json",
    ),
    (
        "partial",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS],
        "Examples:
  rtfprof partial --pytorch_path testdata/pytorch/schedule.pt.trace.json.gz -o schedule.rtfprof
  rtfprof partial --job w0=testdata/jobs/worker0 --job cnn=testdata/cnn/profile -o jobs.rtfprof && rtfprof op --partial_path jobs.rtfprof",
    ),
    (
        "completions",
        &[],
        "Examples:
  rtfprof completions bash > rtfprof.bash
  rtfprof completions zsh > _rtfprof",
    ),
    (
        "man",
        &[],
        "Examples:
  rtfprof man > rtfprof.1
  rtfprof man | gzip > rtfprof.1.gz",
    ),
];

/// The command line as rtfprof parses it: [`Cli`] with each subcommand's
/// help listing only the flags that command reads, and its examples.
pub fn command() -> clap::Command {
    let mut cli = Cli::command();
    let globals: Vec<clap::Arg> = cli.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    for &(name, groups, examples) in SUBCOMMAND_HELP {
        let read = |id: &str| groups.iter().any(|group| group.contains(&id));
        cli = cli.mut_subcommand(name, |mut sub| {
            // A subcommand's own copy of a global flag is not replaced by the
            // propagated one (clap's build), and still parses as global.
            for arg in globals.iter().filter(|a| !read(a.get_id().as_str())) {
                sub = sub.arg(arg.clone().hide(true));
            }
            sub.after_help(examples)
        });
    }
    cli
}

/// Parses `args` (the program name first) as [`command`] does.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> std::result::Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let matches = command().try_get_matches_from(normalize_args(args))?;
    Cli::from_arg_matches(&matches)
}

/// What `rtfprof` alone prints: the usage, the commands and examples,
/// without the flags (`--help` lists them).
fn overview() -> String {
    command()
        .help_template("{about}\n\n{usage-heading} {usage}\n\nCommands:\n{subcommands}{after-help}\n'rtfprof --help' lists every flag.\n")
        .render_help()
        .to_string()
}

/// The `tfprof>` prompt's `help`: its commands (tfprof's own help text
/// is its command line's, with a flag it does not have, `--run_log_path`).
pub const PROMPT_HELP: &str = "Commands (options as on the command line, -flag or --flag; 'rtfprof --help' lists them):
  scope: nodes organized by name scope.
  graph: nodes organized by graph edges.
  op: nodes aggregated by op type.
  code: nodes organized by the Python call stacks that created them.
  advise: run tfprof's checkers and print their advice.
  set: set options that become the defaults of the following commands.
  help: this text.
  quit (or exit, Ctrl-D): leave.
";

/// `1 job`, `3 jobs`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// Rewrites tfprof's single-dash long flags (`-max_depth 3`) to `--max_depth 3`.
/// A single-dash word that is no flag but looks like one (`-selct`) is
/// rewritten too, so that the error names it as typed, with clap's
/// suggestion, not as the short flag `-s`.
pub fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let command = Cli::command();
    let known: Vec<String> = command.get_arguments().filter_map(|a| a.get_long().map(str::to_owned)).collect();
    args.into_iter()
        .map(|arg| match arg.to_str() {
            Some(s) if s.starts_with('-') && !s.starts_with("--") => {
                let name = s[1..].split('=').next().unwrap_or("");
                let looks_long =
                    name.len() > 1 && name.starts_with(|c: char| c.is_ascii_alphabetic()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if known.iter().any(|k| k == name) || looks_long { OsString::from(format!("-{s}")) } else { arg }
            }
            _ => arg,
        })
        .collect()
}

/// A usage error as one line: clap's first line, and its suggestion of a
/// flag or command, if it has one.
pub fn usage_error_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let rendered = e.render().to_string();
    let mut line = rendered.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_owned();
    for kind in [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => line.push_str(&format!("; did you mean '{s}'?")),
            Some(ContextValue::Strings(s)) if !s.is_empty() => line.push_str(&format!("; did you mean '{}'?", s.join("' or '"))),
            _ => {}
        }
    }
    line
}

/// For an input given without its flag (`rtfprof scope trace.xplane.pb`,
/// what a newcomer types first): which flag reads it, where the file's
/// first bytes say so (or, for a directory, the traces in it).
fn path_without_flag(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else { return None };
    let path = std::path::Path::new(arg);
    let (what, flag) = if path.is_dir() {
        // (As the flags would read the directory.)
        if crate::inputs::xplane::locate(path, None).is_ok() {
            ("a directory of XPlane traces", "--xplane_path")
        } else if crate::load::pytorch_ranks(path).is_ok() {
            ("a directory of PyTorch traces", "--pytorch_path")
        } else {
            return None;
        }
    } else {
        let kind = crate::inputs::sniff::sniff_file(path)?.0;
        (kind.describe(), kind.flag()?)
    };
    Some(format!("it looks like {what}: use {flag} {arg}"))
}

/// The `rtfprof` command: parses `args` (the program name first), runs it,
/// prints errors as one line on stderr and returns the exit code: 0, 1 for
/// bad input, 2 for bad usage. The binary's `main` and the Python package's
/// `rtfprof` command both call this.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let cli = match parse(args) {
        Ok(cli) => cli,
        // --help and --version print in full; usage errors get one line.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let hint = path_without_flag(&e).unwrap_or_else(|| "see 'rtfprof --help'".to_owned());
            term::error(&format!("{}; {hint}", usage_error_line(&e)));
            return 2;
        }
    };
    match run(cli).map_err(crate::inputs::sniff::add_hint) {
        Ok(()) => 0,
        Err(e) if e.exit_code() == 2 => {
            term::error(&format!("{e}; see 'rtfprof --help'"));
            2
        }
        Err(e) => {
            term::error(&e.to_string());
            e.exit_code()
        }
    }
}

/// Runs one invocation and writes what it prints to stdout, even when it
/// fails part way (tfprof prints its start-up lines before an unknown step).
///
/// The whole invocation runs on rayon's pool, built with deep stacks (see
/// `with_deep_stack`): memory freed by one phase (decoded records) is then
/// reused by the next (the view), instead of being stranded in the heap of
/// a thread that no longer allocates; that is 100 MB of a large graph's
/// scope view.
pub fn run(cli: Cli) -> Result<()> {
    // Built by the first call only; later calls find the deep pool there.
    let deep = crate::stack::install_deep_pool();
    let mut stdout = String::new();
    let result = if deep {
        let mut result = None;
        rayon::scope(|_| result = Some(execute_to(cli, &mut stdout, Print::Live)));
        result.expect("the pool ran the invocation")
    } else {
        execute_to(cli, &mut stdout, Print::Live)
    };
    write_stdout(stdout.as_bytes())?;
    result
}

/// Runs one invocation, appending to `stdout` exactly what tfprof's CLI prints
/// there. Output files are written here, atomically.
pub fn execute(cli: Cli, stdout: &mut String) -> Result<()> {
    execute_to(cli, stdout, Print::Keep)
}

/// Where a view shown on stdout goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Print {
    /// Appended to the `stdout` text, like everything else.
    Keep,
    /// Written to the process's stdout as it is made, after the text so far:
    /// a large view is never held whole, and a pipe sees its first lines
    /// early.
    Live,
}

fn execute_to(cli: Cli, stdout: &mut String, print: Print) -> Result<()> {
    match &cli.command {
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut command(), "rtfprof", &mut script);
            stdout.push_str(&String::from_utf8_lossy(&script));
            return Ok(());
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command()).render(&mut page).map_err(|e| Error::Io { kind: "man", path: PathBuf::from("-"), source: e })?;
            stdout.push_str(&String::from_utf8_lossy(&page));
            return Ok(());
        }
        _ => {}
    }
    let mut opts = cli.show.to_options()?;
    let html = matches!(opts.output, Output::Html(_));
    match &cli.command {
        Some(Command::Report) if !html => {
            return Err(Error::flag("--output", "report writes one HTML file: give --output html:outfile=PATH"));
        }
        Some(Command::Report | Command::Hlo | Command::Kernels) if cli.show.max_depth.is_none() => opts.max_depth = i64::MAX,
        Some(Command::Report | Command::Diff(_)) => {}
        _ if html => return Err(Error::flag("--output", "html output is written by 'rtfprof report' and 'rtfprof diff'")),
        _ => {}
    }
    if let (Output::Folded(_), Some(view)) = (&opts.output, cli.command.as_ref().and_then(Command::view)) {
        outputs::view::check_folded(view, &opts)?;
    }
    if let Some((command, csv)) = cli.command.as_ref().and_then(|c| Some((c, c.report_csv()?))) {
        outputs::check(command.name(), csv, &opts.output)?;
    }
    let sources = cli.inputs.sources();
    let purpose = cli.command.as_ref().map_or(Purpose::Prompt, Command::purpose);
    load::check_event_flags(&sources, purpose)?;
    if cli.command.is_none() && sources.is_empty() {
        stdout.push_str(&overview());
        return Ok(());
    }
    // Cleared when the inputs are read (or on any return before).
    let progress = term::Progress::start("reading the inputs");
    match &cli.command {
        Some(Command::Jobs) if sources.jobs.is_empty() => {
            return Err(Error::flag("jobs", "give the jobs to summarize with --job NAME=PATH"));
        }
        Some(Command::Jobs) => {
            let jobs = load::load_jobs_apart(&sources, purpose)?;
            let summaries: Vec<_> = jobs.iter().map(|(name, job)| crate::jobs::summarize(name, &job.stats)).collect();
            stdout.push_str(&crate::outputs::jobs::render(&summaries));
            return Ok(());
        }
        Some(Command::Partial(args)) => {
            let partial = crate::make_partial::from_sources(&sources, args.name.as_deref())?;
            outputs::write_atomic(&args.outfile, &crate::partial::to_bytes(&partial))?;
            let jobs: Vec<&str> = partial.job_names().collect();
            stdout.push_str(&format!("Partial profile of {} ({}) written to {}\n", plural(jobs.len(), "job"), jobs.join(", "), args.outfile.display()));
            return Ok(());
        }
        // `steps` reads XPlane traces in place: it needs no nodes.
        Some(Command::Steps) => {
            if let Some((hosts, note)) = load::xplane_hosts(&sources)? {
                push_note(stdout, note);
                return steps::run_xplane(&hosts, &opts, stdout);
            }
            if let Some(ranks) = load::pytorch_only(&sources)? {
                return steps::run_pytorch(&ranks, &opts, stdout);
            }
        }
        // `ranks` reads each rank's trace on its own: it needs no nodes.
        Some(Command::Ranks) => return ranks::run(&sources, &opts, stdout),
        // So do `hlo` and `kernels` on PyTorch traces.
        Some(command @ (Command::Hlo | Command::Kernels)) => {
            if let Some(tables) = crate::device::pytorch_only_tables(&sources)? {
                let table = if matches!(command, Command::Hlo) { crate::device::Table::Hlo } else { crate::device::Table::Kernels };
                return device::show(&tables, table, true, &opts, stdout);
            }
        }
        Some(Command::Diff(args)) => {
            let resolved = load::resolve(&sources, purpose)?;
            push_note(stdout, resolved.note);
            return diff::run(args, &resolved.paths, &resolved.hosts, &sources.partial_paths, &opts, stdout);
        }
        _ => {}
    }
    let mut loaded = load::load(&sources, purpose)?;
    drop(progress);
    stdout.push_str(&std::mem::take(&mut loaded.listing));
    for warning in loaded.stats.warnings.drain(..) {
        term::warning(&warning);
    }
    if let (Some(Command::Report), Output::Html(path)) = (&cli.command, &opts.output) {
        let page = with_deep_stack(|| outputs::html::report_of(&loaded, &sources, &opts))?;
        outputs::stream_atomic(path, |out| outputs::html::write(&page, out))?;
        stdout.push_str(&format!("Report written to {}\n", path.display()));
        std::mem::forget(loaded);
        return Ok(());
    }
    let Some(command) = cli.command else {
        // Print the start-up lines before the first prompt.
        let mut out = io::stdout().lock();
        let _ = out.write_all(std::mem::take(stdout).as_bytes()).and_then(|()| out.flush());
        drop(out);
        return with_deep_stack(|| interactive::run(&loaded, opts));
    };
    let result = match command.view() {
        _ if matches!(command, Command::Memory) => memory::run(&loaded, &opts, stdout),
        _ if matches!(command, Command::Steps) => steps::run(&loaded, &opts, stdout),
        _ if matches!(command, Command::Hlo) => device::run(&loaded, crate::device::Table::Hlo, &opts, stdout),
        _ if matches!(command, Command::Kernels) => device::run(&loaded, crate::device::Table::Kernels, &opts, stdout),
        Some(view) if print == Print::Live && opts.output == Output::Stdout => with_deep_stack(|| print_live(&loaded.stats, view, &opts, stdout)),
        Some(view) => with_deep_stack(|| outputs::view::write(&loaded, view, &opts, stdout)),
        None => {
            with_deep_stack(|| crate::advise::advise_printing_warnings(&loaded)).map(|checkers| stdout.push_str(&crate::outputs::advise::render(&checkers)))
        }
    };
    // The process ends right after; freeing a large profile node by node
    // costs more than the view itself.
    std::mem::forget(loaded);
    result
}

/// The note about which run of a log directory was read, as a start-up line.
fn push_note(stdout: &mut String, note: Option<String>) {
    if let Some(note) = note {
        stdout.push_str(&note);
        stdout.push('\n');
    }
}

/// Writes `stdout`'s text so far, then the view, to the process's stdout (see
/// [`Print::Live`]). A closed pipe ends the view quietly, as in
/// [`write_stdout`].
fn print_live(stats: &Stats, view: View, opts: &Options, stdout: &mut String) -> Result<()> {
    crate::show::check(stats, view, opts)?;
    write_stdout(std::mem::take(stdout).as_bytes())?;
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    stdout_written(crate::show::write_checked(stats, view, opts, &mut out).and_then(|()| out.flush()))
}

/// Writes to stdout; a closed pipe (`rtfprof … | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    stdout_written(out.write_all(bytes).and_then(|()| out.flush()))
}

/// The outcome of writing to stdout: a closed pipe is not an error.
fn stdout_written(written: io::Result<()>) -> Result<()> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::Io { kind: "stdout", path: PathBuf::from("-"), source: e }),
        _ => Ok(()),
    }
}
