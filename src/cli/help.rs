//! The command line's help: which global flags each subcommand reads, its
//! examples on the bundled samples (tests run every one), the overview,
//! the `tfprof>` prompt's help, and one-line usage errors.

use std::ffi::OsString;

use clap::CommandFactory;

use super::args::Cli;
use crate::show::options::VIEW_OPTIONS;

/// Examples under `rtfprof --help`, and what `rtfprof` alone prints after
/// the usage: one command per kind of input, on the bundled samples.
pub(super) const ROOT_EXAMPLES: &str = "Examples (from the repository root, on the bundled samples):
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
/// The flags that select a trace's events: `cut`'s, and the views'
/// timelines' (`--output timeline:outfile=PATH`).
const SELECTION: &[&str] = &["steps", "time_ms", "devices", "min_dur_us"];
/// Each subcommand's help: the global flags it reads (the others are
/// accepted, as tfprof's flags are anywhere, but not listed) and two
/// examples on the bundled samples (tests/integration/cli.rs runs every one).
const SUBCOMMAND_HELP: &[(&str, &[&[&str]], &str)] = &[
    (
        "scope",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS, SELECTION],
        "Examples:
  rtfprof scope --profile_path testdata/cnn/profile --select micros,bytes --max_depth 3
  rtfprof scope --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros --order_by accelerator_micros --max_depth 4
  rtfprof scope --xplane_path testdata/xplane/jax_gpu_cond --steps 2..3 --output timeline:outfile=steps.json.gz",
    ),
    (
        "graph",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS],
        "Examples:
  rtfprof graph --profile_path testdata/cnn/profile --select micros --max_depth 3
  rtfprof graph --graph_path testdata/cnn/graph.pbtxt --run_meta_path testdata/cnn/run_meta_1 --start_name_regexes gradients/.* --max_depth 2",
    ),
    (
        "op",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS, SELECTION],
        "Examples:
  rtfprof op --profile_path testdata/cnn/profile --select micros,occurrence --order_by micros
  rtfprof op --xplane_path testdata/xplane/jax_gpu_cnn --select accelerator_micros,occurrence --order_by accelerator_micros",
    ),
    (
        "code",
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS, SELECTION],
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
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS],
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
        &[TF_INPUTS, XPLANE_INPUTS, PARTIAL_INPUTS, &VIEW_OPTIONS],
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
        "cut",
        &[&["pytorch_path", "xplane_path", "xplane_run"], SELECTION],
        "Examples:
  rtfprof cut --pytorch_path testdata/pytorch/h200_tx.steps2-3.pt.trace.json.gz --steps 3 -o step3.pt.trace.json
  rtfprof cut --pytorch_path testdata/pytorch/schedule.pt.trace.json.gz --steps 4..5 -o steps.pt.trace.json.gz
  rtfprof cut --xplane_path testdata/xplane/jax_gpu_cond --steps 2..3 -o steps2-3.xplane.pb",
    ),
    (
        "check",
        &[&["output", "events_run", "events_tags"]],
        "Examples:
  rtfprof check testdata/check/base_a testdata/check/base_b
  rtfprof check testdata/check/tf_base_a testdata/check/tf_wider --rules testdata/check/rules.toml
  rtfprof check --left_xplane_path testdata/check/wider --right_xplane_path testdata/check/base_a --output stdout --output junit:outfile=check.xml",
    ),
    (
        "capture",
        &[&["output"]],
        "Examples (with a job that called jax.profiler.start_server(9012)):
  rtfprof capture --service_addr localhost:9012 --duration_ms 2000 --logdir logs
  rtfprof capture --service_addr host0:9012,host1:9012 --logdir logs --count 3 --interval_s 60
  rtfprof capture --service_addr localhost:9012 --logdir logs --output json:outfile=steps.json",
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
    let mut cli = overriding(Cli::command());
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

/// A flag given twice takes its last value, as tfprof's command line
/// (TensorFlow's `Flags::Parse`, `command_line_flags.cc`, assigns each
/// argument in turn) and its `tfprof>` prompt do. Flags that collect values
/// (`--output` where repeatable, `--job`) still collect them.
pub(super) fn overriding(cli: clap::Command) -> clap::Command {
    cli.args_override_self(true).mut_subcommands(|sub| sub.args_override_self(true))
}

/// Parses `args` (the program name first) as [`command`] does.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> std::result::Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let matches = command().try_get_matches_from(normalize_args(args))?;
    Cli::from_arg_matches(&matches)
}

/// What `rtfprof` alone prints: the usage, the commands and examples,
/// without the flags (`--help` lists them).
pub(super) fn overview() -> String {
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
pub(super) fn plural(n: usize, what: &str) -> String {
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
pub(super) fn path_without_flag(e: &clap::Error) -> Option<String> {
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
