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
mod steps;

use crate::error::{Error, Result};
use crate::inputs::{InputPaths, Inputs};
use crate::outputs;
use crate::show::options::{Options, Output, RegexList, Select, defaults};
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
    Diff(DiffArgs),
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
    /// XLA instructions that ran (XProf's hlo_stats).
    ///
    /// Per instruction: program, category, framework op, occurrences, total
    /// and self time, longest first (XPlane traces; --max_depth N shows N
    /// rows).
    Hlo,
    /// GPU kernels (XProf's kernel_stats).
    ///
    /// Per kernel: launch configuration and op, occurrences, total, min and
    /// max duration, longest first (XPlane traces; --max_depth N shows N
    /// rows).
    Kernels,
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
            Command::Hlo => "hlo",
            Command::Kernels => "kernels",
            Command::Completions { .. } => "completions",
            Command::Man => "man",
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
            | Command::Hlo
            | Command::Kernels
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
    /// or NAME=EVENT_FILE. Repeat for each job; nodes become NAME/<node>,
    /// devices /NAME<device>.
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

    /// Whether any input was given (without, the CLI prints tfprof's help).
    pub fn has_inputs(&self) -> bool {
        let paths = self.paths();
        paths.graph_path.is_some()
            || !paths.run_meta_paths.is_empty()
            || paths.profile_path.is_some()
            || self.xplane_path.is_some()
            || paths.events_path.is_some()
            || !self.job.is_empty()
    }

    pub fn paths(&self) -> InputPaths {
        InputPaths {
            graph_path: self.graph_path.clone(),
            run_meta_paths: self
                .run_meta_path
                .as_deref()
                .unwrap_or("")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            op_log_path: self.op_log_path.clone(),
            profile_path: self.profile_path.clone(),
            checkpoint_path: self.checkpoint_path.clone(),
            // Resolved to one host's file (or to jobs) by `execute_to`.
            xplane_path: None,
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
    /// timeline:outfile=PATH (Chrome/Perfetto trace written to PATH_<step>), or
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
const TF_INPUTS: &[&str] = &["graph_path", "run_meta_path", "op_log_path", "profile_path", "checkpoint_path", "events_path", "events_run", "events_tags", "job", "estimate_flops", "default_op_log"];
const XPLANE_INPUTS: &[&str] = &["xplane_path", "xplane_run"];
/// The inputs that hold steps, allocations or timed events (no float ops,
/// code traces or checkpoints).
const RUN_INPUTS: &[&str] = &["graph_path", "run_meta_path", "profile_path", "events_path", "events_run", "events_tags", "job", "xplane_path", "xplane_run"];
/// Every view option.
const VIEW_OPTIONS: &[&str] = &[
    "max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes", "min_output_bytes", "min_micros",
    "min_accelerator_micros", "min_cpu_micros", "min_params", "min_float_ops", "min_occurrence", "step",
    "order_by", "account_type_regexes", "start_name_regexes", "trim_name_regexes", "show_name_regexes",
    "hide_name_regexes", "account_displayed_op_only", "select", "output",
];

/// Each subcommand's help: the global flags it reads (the others are
/// accepted, as tfprof's flags are anywhere, but not listed) and two
/// examples on the bundled samples (tests/cli.rs runs every one).
const SUBCOMMAND_HELP: &[(&str, &[&[&str]], &str)] = &[
    ("scope", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof scope --profile_path testdata/cnn/profile --select micros,bytes --max_depth 3
  rtfprof scope --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros --order_by accelerator_micros --max_depth 4"),
    ("graph", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof graph --profile_path testdata/cnn/profile --select micros --max_depth 3
  rtfprof graph --graph_path testdata/cnn/graph.pbtxt --run_meta_path testdata/cnn/run_meta_1 --start_name_regexes gradients/.* --max_depth 2"),
    ("op", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof op --profile_path testdata/cnn/profile --select micros,occurrence --order_by micros
  rtfprof op --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros,occurrence --order_by accelerator_micros"),
    ("code", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof code --profile_path testdata/cnn/profile --select micros --max_depth 4
  rtfprof code --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros --order_by accelerator_micros --output pprof:outfile=cnn.pb.gz"),
    ("advise", &[TF_INPUTS, XPLANE_INPUTS], "Examples:
  rtfprof advise --profile_path testdata/cnn/profile
  rtfprof advise --xplane_path testdata/xplane/jax_gpu_cnn"),
    ("diff", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof diff --profile_path testdata/cnn/profile --left_step 0 --right_step 2 --metric micros
  rtfprof diff --left_profile_path testdata/cnn/profile --right_profile_path testdata/cnn_b8/profile --metric bytes --output html:outfile=diff.html
  rtfprof diff --left_xplane_path testdata/xplane/jax_gpu_mlp --right_xplane_path testdata/xplane/jax_gpu_mlp_nocb --metric accelerator_micros"),
    ("jobs", &[&["job", "events_tags"]], "Examples:
  rtfprof jobs --job w0=testdata/jobs/worker0 --job cnn=testdata/cnn/profile
  rtfprof scope --job w0=testdata/jobs/worker0 --job cnn=testdata/cnn/profile --max_depth 2"),
    ("memory", &[RUN_INPUTS, &["step", "output", "max_depth", "min_bytes", "start_name_regexes", "trim_name_regexes", "show_name_regexes", "hide_name_regexes"]], "Examples:
  rtfprof memory --profile_path testdata/cnn/profile --step 1 --max_depth 3
  rtfprof memory --xplane_path testdata/xplane/jax_gpu_cnn --output json:outfile=memory.json"),
    ("report", &[TF_INPUTS, XPLANE_INPUTS, VIEW_OPTIONS], "Examples:
  rtfprof report --profile_path testdata/cnn/profile --output html:outfile=report.html
  rtfprof report --xplane_path testdata/xplane/jax_gpu_cnn --output html:outfile=report.html"),
    ("steps", &[RUN_INPUTS, &["output"]], "Examples:
  rtfprof steps --xplane_path testdata/xplane/jax_gpu_cnn
  rtfprof steps --profile_path testdata/cnn/profile --output csv:outfile=steps.csv"),
    ("hlo", &[XPLANE_INPUTS, &["max_depth", "output"]], "Examples:
  rtfprof hlo --xplane_path testdata/xplane/jax_gpu_cnn --max_depth 10
  rtfprof hlo --xplane_path testdata/xplane/jax_gpu_cnn --output csv:outfile=hlo.csv"),
    ("kernels", &[XPLANE_INPUTS, &["max_depth", "output"]], "Examples:
  rtfprof kernels --xplane_path testdata/xplane/jax_gpu_cnn --max_depth 10
  rtfprof kernels --xplane_path testdata/xplane/jax_gpu_cnn --output json:outfile=kernels.json"),
    ("completions", &[], "Examples:
  rtfprof completions bash > rtfprof.bash
  rtfprof completions zsh > _rtfprof"),
    ("man", &[], "Examples:
  rtfprof man > rtfprof.1
  rtfprof man | gzip > rtfprof.1.gz"),
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
                let looks_long = name.len() > 1 && name.starts_with(|c: char| c.is_ascii_alphabetic()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
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
            eprintln!("rtfprof: {}; see 'rtfprof --help'", usage_error_line(&e));
            return 2;
        }
    };
    match run(cli).map_err(Error::with_file_kind_hint) {
        Ok(()) => 0,
        Err(e) if e.exit_code() == 2 => {
            eprintln!("rtfprof: {e}; see 'rtfprof --help'");
            2
        }
        Err(e) => {
            eprintln!("rtfprof: {e}");
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
    if rayon::ThreadPoolBuilder::new().stack_size(DEEP_STACK_BYTES).build_global().is_ok() {
        DEEP_POOL.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let deep = DEEP_POOL.load(std::sync::atomic::Ordering::Relaxed);
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
        check_folded(view, &opts)?;
    }
    if matches!(cli.command, Some(Command::Memory)) {
        memory::check_output(&opts)?;
    }
    if matches!(cli.command, Some(Command::Steps)) {
        steps::check_output(&opts)?;
    }
    if let Some(table @ (Command::Hlo | Command::Kernels)) = &cli.command {
        device::check_output(table.name(), &opts)?;
    }
    check_event_flags(&cli.inputs.paths(), &cli.inputs.job, &cli.command)?;
    let no_inputs = !cli.inputs.has_inputs();
    if cli.command.is_none() && no_inputs {
        stdout.push_str(&overview());
        return Ok(());
    }
    if matches!(cli.command, Some(Command::Jobs)) && cli.inputs.job.is_empty() {
        return Err(Error::flag("jobs", "give the jobs to summarize with --job NAME=PATH"));
    }
    // `steps` reads XPlane traces in place: it needs no nodes.
    if matches!(cli.command, Some(Command::Steps))
        && let Some(hosts) = xplane_hosts(&cli.inputs, stdout)?
    {
        return steps::run_xplane(&hosts, &opts, stdout);
    }
    // Run graph coverage for the report's header: of the inputs, or of each job.
    let mut coverage = Vec::new();
    let Some(mut stats) = load(cli.command.as_ref(), &cli.inputs, &opts, &mut coverage, stdout)? else {
        return Ok(());
    };
    for warning in stats.warnings.drain(..) {
        eprintln!("{warning}");
    }
    if let (Some(Command::Report), Output::Html(path)) = (&cli.command, &opts.output) {
        let no_allocations = memory::no_records_note(&cli.inputs.paths(), cli.inputs.xplane_path.is_some()).to_owned();
        let sources = outputs::html::Sources { inputs: input_flags(&cli.inputs), coverage, no_allocations };
        let page = with_deep_stack(|| outputs::html::report_page(&stats, &opts, &sources))?;
        outputs::stream_atomic(path, |out| outputs::html::write(&page, out))?;
        stdout.push_str(&format!("Report written to {}\n", path.display()));
        std::mem::forget(stats);
        return Ok(());
    }
    let Some(command) = cli.command else {
        // Print the start-up lines before the first prompt.
        let mut out = io::stdout().lock();
        let _ = out.write_all(std::mem::take(stdout).as_bytes()).and_then(|()| out.flush());
        drop(out);
        return with_deep_stack(|| interactive::run(&stats, opts));
    };
    let result = match command.view() {
        _ if matches!(command, Command::Memory) => memory::run(&stats, &cli.inputs.paths(), cli.inputs.xplane_path.is_some(), &opts, stdout),
        _ if matches!(command, Command::Steps) => steps::run(&stats, &opts, stdout),
        _ if matches!(command, Command::Hlo) => device::run(&stats, crate::device::Table::Hlo, &opts, stdout),
        _ if matches!(command, Command::Kernels) => device::run(&stats, crate::device::Table::Kernels, &opts, stdout),
        Some(view) if print == Print::Live && opts.output == Output::Stdout => {
            with_deep_stack(|| print_live(&stats, view, &opts, stdout))
        }
        Some(view) => with_deep_stack(|| emit(&stats, view, &opts, stdout)),
        None => with_deep_stack(|| crate::advise::advise_printing_warnings(&stats))
            .map(|checkers| stdout.push_str(&crate::advise::render(&checkers))),
    };
    // The process ends right after; freeing a large profile node by node
    // costs more than the view itself.
    std::mem::forget(stats);
    result
}

/// `--events_run` and `--events_tags` go with event logs (`--events_path`,
/// or `diff` sides and, for the tags, jobs that may be event logs); the tag
/// regex is checked before any file is read.
fn check_event_flags(paths: &InputPaths, jobs: &[String], command: &Option<Command>) -> Result<()> {
    let diff = matches!(command, Some(Command::Diff(_)));
    if paths.events_run.is_some() && !jobs.is_empty() {
        return Err(Error::flag("--events_run", "with --job, give each job its run's directory (--job NAME=LOGDIR/RUN)"));
    }
    if paths.events_run.is_some() && paths.events_path.is_none() && !diff {
        return Err(Error::flag("--events_run", "needs --events_path"));
    }
    if paths.events_tags.is_some() && paths.events_path.is_none() && jobs.is_empty() && !diff {
        return Err(Error::flag("--events_tags", "needs --events_path (or --job)"));
    }
    paths.events_tags.as_deref().map(crate::inputs::events::tag_filter).transpose().map(drop)
}

/// Reads the inputs `command` needs into stats, with tfprof's start-up lines
/// appended to `stdout`: an XPlane run directory becomes one job a host,
/// `--job`s are loaded and merged. `None` when the command (diff, jobs) has
/// already made its report. The run graph coverage of the inputs, or of each
/// job, is added to `coverage` (for the report's header).
fn load(
    command: Option<&Command>,
    inputs: &InputArgs,
    opts: &Options,
    coverage: &mut Vec<(String, f64)>,
    stdout: &mut String,
) -> Result<Option<Stats>> {
    let mut paths = inputs.paths();
    // Only the code view (text or pprof), advise and the prompt read code traces.
    paths.skip_code_traces = matches!(command, Some(Command::Scope | Command::Graph | Command::Op));
    // Only advise, the prompt and FLOPs estimates read node attributes.
    paths.skip_attrs =
        matches!(command, Some(Command::Scope | Command::Graph | Command::Op | Command::Code | Command::Report)) && !paths.estimate_flops.is_on();
    // The report's memory tab replays the allocation records.
    paths.allocations = matches!(command, Some(Command::Report));
    if matches!(command, Some(Command::Memory)) {
        paths.allocations = true;
        paths.skip_code_traces = true;
        paths.skip_attrs = !paths.estimate_flops.is_on();
    }
    if matches!(command, Some(Command::Steps | Command::Hlo | Command::Kernels)) {
        paths.skip_code_traces = true;
        paths.skip_attrs = !paths.estimate_flops.is_on();
    }
    // A run directory with several hosts' traces is read as one job a host.
    let mut xplane_jobs = Vec::new();
    if let Some(hosts) = xplane_hosts(inputs, stdout)? {
        match hosts.as_slice() {
            [(_, file)] => paths.xplane_path = Some(file.clone()),
            hosts => {
                xplane_jobs = hosts
                    .iter()
                    .map(|(host, file)| crate::jobs::JobSpec {
                        name: host.clone(),
                        inputs: InputPaths { xplane_path: Some(file.clone()), graph_path: paths.graph_path.clone(), ..paths.clone() },
                    })
                    .collect();
            }
        }
    }
    if let Some(Command::Diff(args)) = command {
        crate::cli::diff::run(args, &paths, &xplane_jobs, opts, stdout)?;
        return Ok(None);
    }
    if paths.xplane_path.is_some() || !xplane_jobs.is_empty() {
        if matches!(command, Some(Command::Graph)) && paths.graph_path.is_none() {
            return Err(Error::flag("graph", "an XPlane trace has no graph edges: add the model's GraphDef with --graph_path"));
        }
    }
    if inputs.job.is_empty() && xplane_jobs.is_empty() {
        let stats = load_stats(Inputs::load(&paths)?, &paths, stdout)?;
        if !paths.run_meta_paths.is_empty() {
            coverage.push((String::new(), stats.run_coverage()));
        }
        check_code_traces(command, &stats).inspect_err(|_| stdout.clear())?;
        return Ok(Some(stats));
    }
    let jobs = if xplane_jobs.is_empty() {
        load_jobs(&inputs.job, &paths)?
    } else {
        crate::jobs::load(&xplane_jobs, |inputs| load_stats(Inputs::load(inputs)?, inputs, &mut String::new()))?
    };
    if matches!(command, Some(Command::Jobs)) {
        let summaries: Vec<_> = jobs.iter().map(|(name, stats)| crate::jobs::summarize(name, stats)).collect();
        stdout.push_str(&crate::jobs::render(&summaries));
        return Ok(None);
    }
    stdout.push_str("Reading Files...\n");
    for (name, stats) in &jobs {
        stdout.push_str(&format!("job {name}: run graph coverage: {:.2}\n", stats.run_coverage()));
        coverage.push((name.clone(), stats.run_coverage()));
    }
    let merged = crate::jobs::merge(jobs);
    check_code_traces(command, &merged).inspect_err(|_| stdout.clear())?;
    Ok(Some(merged))
}

/// The code view of XPlane traces needs the Python frames XLA programs
/// record for their instructions (JAX's do); TF's ops carry none.
fn check_code_traces(command: Option<&Command>, stats: &Stats) -> Result<()> {
    if matches!(command, Some(Command::Code)) && !stats.traces.is_empty() && !stats.has_code_traces {
        return Err(Error::flag(
            "code",
            "this XPlane trace has no Python call stacks for its ops (JAX's XLA programs record them; TF's ops do not): use scope or op",
        ));
    }
    Ok(())
}

/// The trace files of `inputs`' `--xplane_path`, one a host (`None`
/// without one); [`crate::inputs::xplane::locate`]'s note about the run it
/// chose goes to `stdout`.
fn xplane_hosts(inputs: &InputArgs, stdout: &mut String) -> Result<Option<Vec<(String, PathBuf)>>> {
    if inputs.xplane_run.is_some() && inputs.xplane_path.is_none() {
        return Err(Error::flag("--xplane_run", "needs --xplane_path LOGDIR"));
    }
    let Some(path) = &inputs.xplane_path else { return Ok(None) };
    if !inputs.job.is_empty() {
        return Err(Error::flag("--xplane_path", "give each job's trace with --job NAME=PATH instead"));
    }
    let located = crate::inputs::xplane::locate(path, inputs.xplane_run.as_deref())?;
    if let Some(note) = located.note {
        stdout.push_str(&note);
        stdout.push('\n');
    }
    Ok(Some(located.hosts))
}

/// The steps of `inputs` as `rtfprof steps` finds them; no step is an
/// error, as there. XPlane traces are read in place (no nodes are built).
pub fn load_steps(inputs: &InputArgs, stdout: &mut String) -> Result<crate::steps::Steps> {
    load_steps_warning(inputs, stdout).map(|(steps, _)| steps)
}

/// [`load_steps`], with the warnings about the inputs that the CLI prints
/// on stderr.
pub fn load_steps_warning(inputs: &InputArgs, stdout: &mut String) -> Result<(crate::steps::Steps, Vec<String>)> {
    check_event_flags(&inputs.paths(), &inputs.job, &Some(Command::Steps))?;
    if let Some(hosts) = xplane_hosts(inputs, stdout)? {
        return Ok((steps::analyze_xplane(&hosts)?, Vec::new()));
    }
    let mut stats = load(Some(&Command::Steps), inputs, &Options::default(), &mut Vec::new(), stdout)?.expect("steps loads stats");
    let warnings = std::mem::take(&mut stats.warnings);
    Ok((steps::with_rows(crate::steps::analyze(&stats)?, &[])?, warnings))
}

/// Reads the inputs as `rtfprof memory` reads them (allocation records
/// kept); start-up lines to `stdout`, warnings left in [`Stats::warnings`].
pub fn load_memory(inputs: &InputArgs, stdout: &mut String) -> Result<Stats> {
    check_event_flags(&inputs.paths(), &inputs.job, &Some(Command::Memory))?;
    Ok(load(Some(&Command::Memory), inputs, &Options::default(), &mut Vec::new(), stdout)?.expect("memory loads stats"))
}

/// The XLA instructions and kernels of the inputs' XPlane traces, as `rtfprof
/// hlo` and `rtfprof kernels` list them (every job's, merged); inputs other
/// than XPlane traces are an error, as there.
pub fn load_tables(inputs: &InputArgs, stdout: &mut String) -> Result<crate::device::Tables> {
    check_event_flags(&inputs.paths(), &inputs.job, &Some(Command::Kernels))?;
    let stats = load(Some(&Command::Kernels), inputs, &Options::default(), &mut Vec::new(), stdout)?.expect("kernels loads stats");
    device::tables(&stats, "kernels")
}

/// Reads the inputs of one view as `rtfprof <view>` reads them (see
/// [`load`]); tfprof's start-up lines are appended to `stdout`, warnings
/// left in [`Stats::warnings`].
pub fn load_view(view: View, inputs: &InputArgs, stdout: &mut String) -> Result<Stats> {
    let command = match view {
        View::Scope => Command::Scope,
        View::Graph => Command::Graph,
        View::Op => Command::Op,
        View::Code => Command::Code,
    };
    check_event_flags(&inputs.paths(), &inputs.job, &Some(command.clone()))?;
    Ok(load(Some(&command), inputs, &Options::default(), &mut Vec::new(), stdout)?.expect("a view command always loads stats"))
}

/// The input flags as given, for the report's header.
fn input_flags(inputs: &InputArgs) -> Vec<(String, String)> {
    let mut flags = Vec::new();
    let mut add = |flag: &str, value: Option<String>| {
        if let Some(value) = value {
            flags.push((flag.to_owned(), value));
        }
    };
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    add("--profile_path", path(&inputs.profile_path));
    add("--xplane_path", path(&inputs.xplane_path));
    add("--xplane_run", inputs.xplane_run.clone());
    add("--events_path", path(&inputs.events_path));
    add("--events_run", inputs.events_run.clone());
    add("--events_tags", inputs.events_tags.clone());
    add("--graph_path", path(&inputs.graph_path));
    add("--run_meta_path", inputs.run_meta_path.clone());
    add("--op_log_path", path(&inputs.op_log_path));
    add("--checkpoint_path", path(&inputs.checkpoint_path));
    for job in &inputs.job {
        add("--job", Some(job.clone()));
    }
    flags
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

/// Shows one view where `--output` says: its text on stdout or in a file, a
/// timeline, or a pprof profile. Needs a deep stack (see `with_deep_stack`).
pub fn emit(stats: &Stats, view: View, opts: &Options, stdout: &mut String) -> Result<()> {
    match &opts.output {
        Output::Timeline(path) => write_timeline(stats, view, opts, path, stdout),
        Output::Pprof(path) => write_pprof(stats, view, opts, path, stdout),
        Output::Folded(path) => {
            let metric = check_folded(view, opts)?;
            let root = crate::show::run(stats, view, opts)?.root;
            outputs::stream_atomic(path, |out| outputs::folded::write(&root, metric, out))
        }
        Output::Stdout => {
            stdout.push_str(&crate::show::render(stats, view, opts)?);
            Ok(())
        }
        Output::None => crate::show::render(stats, view, opts).map(drop),
        Output::File(path) => {
            crate::show::check(stats, view, opts)?;
            outputs::stream_atomic(path, |mut out| crate::show::write_checked(stats, view, opts, &mut out).map(|()| out))
        }
        Output::Html(_) => Err(Error::flag("--output", "html output is written by 'rtfprof report' and 'rtfprof diff'")),
        Output::Csv(path) | Output::Json(path) => {
            use crate::outputs::table;
            let root = crate::show::run(stats, view, opts)?.root;
            let per_step = crate::show::per_step(stats, view, opts);
            let csv = matches!(opts.output, Output::Csv(_));
            outputs::stream_atomic(path, |out| {
                if csv { table::write_csv(&root, Some(&per_step), out) } else { table::write_json(view, opts.step, &root, Some(&per_step), out) }
            })
        }
    }
}

/// Folded stacks exist for the tree views whose nodes nest (scope and
/// code), with one time or bytes metric.
fn check_folded(view: View, opts: &Options) -> Result<crate::show::options::Shown> {
    if !matches!(view, View::Scope | View::Code) {
        return Err(Error::flag("--output", format!("folded output is only available for the scope and code views, not {}", view.as_str())));
    }
    outputs::folded::selected_metric(opts)
}

/// pprof output exists for the code view only, with one metric selected.
fn write_pprof(stats: &Stats, view: View, opts: &Options, path: &std::path::Path, stdout: &mut String) -> Result<()> {
    use crate::outputs::pprof;
    if view != View::Code {
        return Err(Error::flag("--output", "pprof output is only available for the code view"));
    }
    pprof::selected_metric(opts)?;
    crate::show::check(stats, view, opts)?;
    let code = crate::views::code::build(stats);
    let root = crate::show::tree::TreeShow::new(stats, &code.tree, opts, view).run(&mut String::new());
    let profile = pprof::build(stats, &code.tree, &root, opts)?;
    outputs::stream_atomic(path, |out| pprof::write(&profile, out))?;
    stdout.push_str(&pprof::written_message(path));
    Ok(())
}

/// Timelines go to `<outfile>_<step>`, as tfprof names them. The graph view
/// needs a concrete step; with `--step -1` it writes one file per step.
fn write_timeline(stats: &Stats, view: View, opts: &Options, outfile: &std::path::Path, stdout: &mut String) -> Result<()> {
    use crate::outputs::timeline;
    if !stats.traces.is_empty() {
        // An XPlane trace: its own events, for the step asked for.
        crate::show::check(stats, view, opts)?;
        let path = timeline::file_for_step(outfile, opts.step);
        outputs::stream_atomic(&path, |out| timeline::write_xplane(&stats.traces, opts.step, out))?;
        stdout.push_str(&timeline::written_message(&path));
        return Ok(());
    }
    match view {
        View::Op => Err(Error::flag("--output", "the op view has no timeline; use the graph, scope or code view")),
        View::Graph => {
            let steps: Vec<i64> = if opts.step < 0 { stats.steps.iter().copied().collect() } else { vec![opts.step] };
            for step in steps {
                let opts = Options { step, ..opts.clone() };
                let root = crate::show::run(stats, view, &opts)?.root;
                let path = timeline::file_for_step(outfile, step);
                stdout.push_str("generating trace file.\n");
                outputs::stream_atomic(&path, |out| timeline::write_graph(stats, &root, step, out))?;
                stdout.push_str(&timeline::peak_memory_note(stats, &root, step));
                stdout.push_str(&timeline::written_message(&path));
            }
            Ok(())
        }
        View::Scope | View::Code => {
            let root = crate::show::run(stats, view, opts)?.root;
            let path = timeline::file_for_step(outfile, opts.step);
            outputs::stream_atomic(&path, |out| timeline::write_tree(&root, view.as_str(), out))?;
            stdout.push_str(&timeline::written_message(&path));
            Ok(())
        }
    }
}

/// Loads each `--job` on its own (in parallel); no other inputs may be given.
fn load_jobs(specs: &[String], paths: &InputPaths) -> Result<Vec<(String, Stats)>> {
    if paths.graph_path.is_some()
        || !paths.run_meta_paths.is_empty()
        || paths.profile_path.is_some()
        || paths.op_log_path.is_some()
        || paths.events_path.is_some()
    {
        return Err(Error::flag("--job", "give each job's files with --job NAME=PATH, not with the single-job input flags"));
    }
    let mut specs = specs.iter().map(|s| crate::jobs::JobSpec::parse(s)).collect::<Result<Vec<_>>>()?;
    for spec in &mut specs {
        spec.inputs.estimate_flops = paths.estimate_flops;
        if spec.inputs.events_path.is_some() {
            spec.inputs.events_tags.clone_from(&paths.events_tags);
        }
        spec.inputs.allocations = paths.allocations;
    }
    let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::flag("--job", format!("job name '{}' given twice", w[0])));
    }
    crate::jobs::load(&specs, |inputs| load_stats(Inputs::load(inputs)?, inputs, &mut String::new()))
}

/// Ingests the inputs, printing tfprof's start-up lines to `stdout`.
pub(crate) fn load_stats(inputs: Inputs, paths: &InputPaths, stdout: &mut String) -> Result<Stats> {
    let mut stats = ingest(inputs, paths, stdout)?;
    stats.estimate_missing_flops(paths.estimate_flops);
    Ok(stats)
}

fn ingest(inputs: Inputs, paths: &InputPaths, stdout: &mut String) -> Result<Stats> {
    if let Some(profile) = inputs.profile {
        let path = paths.profile_path.clone().unwrap_or_default();
        let mut stats = Stats::from_profile(profile).map_err(|e| Error::input("--profile_path", path, e))?;
        stats.keep_allocations = paths.allocations;
        // As in tfprof, a profile's nodes are not tagged _checkpoint_variables.
        if let Some(checkpoint) = inputs.checkpoint {
            stats.add_checkpoint(checkpoint, false);
        }
        stdout.push_str("Reading Files...\n");
        return Ok(stats);
    }
    let mut stats = Stats::new();
    stats.warnings = inputs.warnings;
    stats.skip_runtime_shapes = !paths.estimate_flops.is_on();
    stats.keep_allocations = paths.allocations;
    stats.add_graph(inputs.graph);
    if let Some(op_log) = inputs.op_log {
        stats.add_op_log(op_log);
    }
    if let Some(checkpoint) = inputs.checkpoint {
        stats.add_checkpoint(checkpoint, true);
    }
    if let Some(trace) = &inputs.xplane {
        let mut known = crate::stats::InputNodes::default();
        let mut converted = trace.convert(paths.allocations, &mut |names, totals| {
            stats.add_exec_totals(&mut known, totals.len(), |i| names.exec_total(&totals[i]));
        })?;
        stats.add_memory_totals(&converted.memory);
        stats.add_frames(&converted.frames);
        stats.add_allocator_events(&converted.allocator_events);
        stdout.push_str("Reading Files...\n");
        stdout.push_str(&xplane_summary(&trace.path, &converted, &stats));
        let source = crate::inputs::xplane::TraceSource::new(trace, &mut converted);
        stats.traces.push((String::new(), std::sync::Arc::new(source)));
        return Ok(stats);
    }
    // Printed only once every file has been read: a bad file prints nothing.
    let mut lines = String::from("Reading Files...\n");
    lines.push_str("Try to use a single --profile_path instead of graph_path,op_log_path,run_meta_path\n");
    lines.push_str(&inputs.listing);
    stats.add_run_meta_files(&inputs.run_metas, |coverage| lines.push_str(&format!("run graph coverage: {coverage:.2}\n")))?;
    stdout.push_str(&lines);
    Ok(stats)
}

/// The start-up lines of an XPlane trace: what it holds and how it was split
/// into steps.
fn xplane_summary(path: &std::path::Path, trace: &crate::inputs::xplane::convert::Converted, stats: &Stats) -> String {
    let mut lines = format!(
        "xplane: {}: {} planes ({}), {} op executions, {} nodes\n",
        path.display(),
        trace.planes.len(),
        trace.planes.join(", "),
        trace.executions,
        stats.nodes.len()
    );
    if trace.steps.is_empty() {
        lines.push_str("xplane: no step markers: the whole trace is step 0\n");
    } else {
        let mut names: Vec<&str> = trace.steps.values().map(|s| s.name.as_str()).collect();
        names.dedup();
        let steps: Vec<i64> = trace.steps.keys().copied().collect();
        lines.push_str(&format!("xplane: steps {} (markers '{}')", format_ranges(&steps), names.join("', '")));
        match trace.outside_step {
            Some(step) => lines.push_str(&format!("; step {step}: executions outside every marker\n")),
            None => lines.push('\n'),
        }
    }
    if trace.memory_events == 0 {
        lines.push_str("xplane: the trace holds no memory records: the bytes columns are 0\n");
    } else {
        lines.push_str(&format!(
            "xplane: {} allocator events: bytes go to the op their tf_op names ({} allocations name no op)\n",
            trace.memory_events, trace.unattributed_allocations
        ));
    }
    lines
}

/// `0..3, 7, 9..12` for a sorted list of step numbers.
fn format_ranges(steps: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let mut j = i;
        while j + 1 < steps.len() && steps[j + 1] == steps[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}..{}", steps[i], steps[j]) } else { steps[i].to_string() });
        i = j + 1;
    }
    parts.join(", ")
}

/// Stack of a thread that builds views (address space; only what the
/// recursion reaches is touched).
const DEEP_STACK_BYTES: usize = 1 << 30;

/// Whether [`run`] built rayon's global pool with deep stacks.
static DEEP_POOL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Views recurse along name scopes and input chains, which can be thousands
/// deep in real graphs, so they run on a thread with a large stack: the
/// current one when it is a worker of the pool [`run`] built, else one of
/// their own.
pub fn with_deep_stack<T: Send>(work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if DEEP_POOL.load(std::sync::atomic::Ordering::Relaxed) && rayon::current_thread_index().is_some() {
        return work();
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("rtfprof-render".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|e| Error::Profile(format!("cannot start the render thread: {e}")))?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
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
