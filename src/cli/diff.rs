//! Resolving `rtfprof diff`'s two sides into value trees and printing the
//! report.

use std::path::PathBuf;

use super::DiffArgs;
use crate::stack::with_deep_stack;
use crate::diff::{self, Metric, ValueTree};
use crate::outputs::diff::Labels;
use crate::error::{Error, Result};
use crate::inputs::{InputPaths, tfprof_text};
use crate::jobs::JobSpec;
use crate::outputs;
use crate::show::options::Output;
use crate::show::{self, Options};
use crate::views::View;

/// One side: profile inputs at a step, or a saved tfprof text output.
enum Side {
    Profile(InputPaths, i64),
    /// The hosts of an XPlane run directory, merged as jobs, at a step.
    Jobs(Vec<JobSpec>, i64),
    /// A saved tfprof output, and the flag that named it (for errors).
    Text(PathBuf, &'static str),
}

/// A side's inputs from its `--left_*`/`--right_*` flags; `global` gives
/// the rest (`--estimate_flops`, `--events_run`, `--events_tags`).
fn side_inputs(
    graph: &Option<PathBuf>,
    run_meta: &Option<String>,
    op_log: &Option<PathBuf>,
    profile: &Option<PathBuf>,
    events: &Option<PathBuf>,
    global: &InputPaths,
) -> Option<InputPaths> {
    if graph.is_none() && run_meta.is_none() && op_log.is_none() && profile.is_none() && events.is_none() {
        return None;
    }
    Some(InputPaths {
        graph_path: graph.clone(),
        run_meta_paths: run_meta.as_deref().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect(),
        op_log_path: op_log.clone(),
        profile_path: profile.clone(),
        checkpoint_path: None,
        xplane_path: None,
        pytorch_path: None,
        events_path: events.clone(),
        events_run: global.events_run.clone(),
        events_tags: global.events_tags.clone(),
        estimate_flops: global.estimate_flops,
        skip_code_traces: false,
        skip_attrs: false,
        allocations: false,
    })
}

/// A side's trace (`--left_xplane_path`, `--right_pytorch_path`, …): one
/// host's or rank's file, or a directory's hosts or ranks as jobs.
/// Errors name the side's flag (`side`: left or right).
fn trace_side(sources: crate::load::Sources, side: &str, step: i64, global: &InputPaths) -> Result<Side> {
    let kind = if sources.xplane_path.is_some() { "xplane" } else { "pytorch" };
    let flag: &'static str = match (side, kind) {
        ("left", "xplane") => "--left_xplane_path",
        ("left", _) => "--left_pytorch_path",
        (_, "xplane") => "--right_xplane_path",
        _ => "--right_pytorch_path",
    };
    let sources = crate::load::Sources { paths: InputPaths { estimate_flops: global.estimate_flops, ..InputPaths::default() }, ..sources };
    let resolved = crate::load::resolve(&sources, crate::load::Purpose::Diff).map_err(|e| match e {
        Error::Io { path, source, .. } => Error::Io { kind: flag, path, source },
        Error::Input { path, message, .. } => Error::Input { kind: flag, path, message },
        e => e,
    })?;
    Ok(if resolved.hosts.is_empty() { Side::Profile(resolved.paths, step) } else { Side::Jobs(resolved.hosts, step) })
}

impl Side {
    fn is_trace(&self) -> bool {
        match self {
            Side::Profile(paths, _) => paths.xplane_path.is_some() || paths.pytorch_path.is_some(),
            Side::Jobs(..) => true,
            Side::Text(..) => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Side::Text(path, _) => path.display().to_string(),
            Side::Jobs(jobs, step) => {
                let hosts = jobs.iter().map(|job| job.name.as_str()).collect::<Vec<_>>().join(",");
                if *step >= 0 { format!("hosts {hosts} step {step}") } else { format!("hosts {hosts}") }
            }
            Side::Profile(paths, step) => {
                let source = paths
                    .profile_path
                    .as_ref()
                    .or(paths.xplane_path.as_ref())
                    .or(paths.pytorch_path.as_ref())
                    .or(paths.events_path.as_ref())
                    .or(paths.graph_path.as_ref())
                    .or(paths.run_meta_paths.first())
                    .map_or_else(|| "(no inputs)".to_owned(), |p| p.display().to_string());
                if *step >= 0 { format!("{source} step {step}") } else { source }
            }
        }
    }

    fn tree(&self, view: View, metric: Metric, opts: &Options) -> Result<ValueTree> {
        match self {
            Side::Text(path, flag) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| Error::Io { kind: flag, path: path.clone(), source })?;
                if text.is_empty() {
                    return Err(Error::input(flag, path, "is empty"));
                }
                ValueTree::from_text(&tfprof_text::parse(&text, path)?, metric, path)
            }
            Side::Profile(paths, step) => {
                let stats = load_side(paths, view)?;
                Self::view_tree(&stats, *step, view, metric, opts)
            }
            Side::Jobs(jobs, step) => {
                let stats = crate::jobs::merge(crate::jobs::load(jobs, |paths| load_side(paths, view))?);
                Self::view_tree(&stats, *step, view, metric, opts)
            }
        }
    }

    fn view_tree(stats: &crate::stats::Stats, step: i64, view: View, metric: Metric, opts: &Options) -> Result<ValueTree> {
        let opts = Options { step, output: Output::None, ..opts.clone() };
        let root = with_deep_stack(|| show::run(stats, view, &opts))?.root;
        Ok(ValueTree::from_view(&root, metric))
    }
}

/// One side's inputs as the view needs them.
fn load_side(paths: &InputPaths, view: View) -> Result<crate::stats::Stats> {
    let paths = &InputPaths { skip_code_traces: view != View::Code, skip_attrs: !paths.estimate_flops.is_on(), ..paths.clone() };
    Ok(crate::load::load_paths(paths)?.stats)
}

/// `global` is the global input flags (the default of both sides), with
/// `--xplane_path` resolved: to its one host's file in `global`, or to
/// `global_hosts`, one job a host.
pub fn run(args: &DiffArgs, global: &InputPaths, global_hosts: &[JobSpec], opts: &Options, stdout: &mut String) -> Result<()> {
    let view = match args.view.as_str() {
        "scope" => View::Scope,
        "graph" => View::Graph,
        "code" => View::Code,
        other => return Err(Error::flag("--view", format!("'{other}' cannot be diffed (use scope, graph or code)"))),
    };
    if !(args.delta >= 0.0) {
        return Err(Error::flag("--delta", "must be a number >= 0"));
    }
    let min_size = diff::parse_size(&args.min_size)?;
    let names: Vec<&str> = args.names.split(',').collect();
    let [left_name, right_name] = names[..] else {
        return Err(Error::flag("--names", "give two names separated by a comma, e.g. bs32,bs64"));
    };

    let (left_step, right_step) = (args.left_step.unwrap_or(opts.step), args.right_step.unwrap_or(opts.step));
    let global_side = |step| match global_hosts {
        [] => Side::Profile(global.clone(), step),
        hosts => Side::Jobs(hosts.to_vec(), step),
    };
    let left_inputs = side_inputs(
        &args.left_graph_path,
        &args.left_run_meta_path,
        &args.left_op_log_path,
        &args.left_profile_path,
        &args.left_events_path,
        global,
    );
    let right_inputs = side_inputs(
        &args.right_graph_path,
        &args.right_run_meta_path,
        &args.right_op_log_path,
        &args.right_profile_path,
        &args.right_events_path,
        global,
    );
    let trace_sources = |xplane: &Option<PathBuf>, pytorch: &Option<PathBuf>| {
        (xplane.is_some() || pytorch.is_some())
            .then(|| crate::load::Sources { xplane_path: xplane.clone(), pytorch_path: pytorch.clone(), ..Default::default() })
    };
    let left_trace = trace_sources(&args.left_xplane_path, &args.left_pytorch_path);
    let right_trace = trace_sources(&args.right_xplane_path, &args.right_pytorch_path);
    for (trace, files, flag) in [(&left_trace, &left_inputs, "--left_xplane_path"), (&right_trace, &right_inputs, "--right_xplane_path")] {
        if trace.is_some() && files.is_some() {
            return Err(Error::flag(flag, "a side is one trace or TF files, not both"));
        }
    }
    let left = match (&args.left_text, left_trace, left_inputs) {
        (Some(path), _, _) => Side::Text(path.clone(), "--left_text"),
        (None, Some(trace), _) => trace_side(trace, "left", left_step, global)?,
        (None, None, Some(inputs)) => Side::Profile(inputs, left_step),
        (None, None, None) => global_side(left_step),
    };
    let right = match (&args.right_text, right_trace, right_inputs) {
        (Some(path), _, _) => Side::Text(path.clone(), "--right_text"),
        (None, Some(trace), _) => trace_side(trace, "right", right_step, global)?,
        (None, None, Some(inputs)) => Side::Profile(inputs, right_step),
        // Without right-side inputs, the right side is the left's at --right_step.
        (None, None, None) => match &left {
            Side::Profile(paths, _) => Side::Profile(paths.clone(), right_step),
            Side::Jobs(jobs, _) => Side::Jobs(jobs.clone(), right_step),
            Side::Text(..) => global_side(right_step),
        },
    };
    let metric = match &args.metric {
        Some(metric) => Metric::parse(metric)?,
        None if left.is_trace() || right.is_trace() => Metric::parse("micros")?,
        None => Metric::parse("bytes")?,
    };
    for (side, flag) in [(&left, "--left_graph_path"), (&right, "--right_graph_path")] {
        if let Side::Profile(paths, _) = side {
            if paths.graph_path.is_none()
                && paths.run_meta_paths.is_empty()
                && paths.profile_path.is_none()
                && paths.xplane_path.is_none()
                && paths.pytorch_path.is_none()
                && paths.events_path.is_none()
            {
                return Err(Error::flag(flag, "no inputs for this side (give profile files or --left_text/--right_text)"));
            }
        }
    }
    let same = match (&left, &right) {
        (Side::Profile(a, s), Side::Profile(b, t)) => a == b && s == t,
        (Side::Jobs(a, s), Side::Jobs(b, t)) => a.iter().map(|j| (&j.name, &j.inputs)).eq(b.iter().map(|j| (&j.name, &j.inputs))) && s == t,
        _ => false,
    };
    if same {
        return Err(Error::flag("diff", "both sides are the same inputs and step: give --right_* inputs or --left_step/--right_step"));
    }

    if !matches!(opts.output, Output::Stdout | Output::File(_) | Output::Folded(_) | Output::Html(_)) {
        return Err(Error::flag("--output", "diff writes text (stdout, file:outfile=PATH), folded:outfile=PATH or html:outfile=PATH"));
    }
    let (left_tree, right_tree) = (left.tree(view, metric, opts)?, right.tree(view, metric, opts)?);
    let merged = diff::merge(Some(&left_tree), Some(&right_tree));
    if let Output::Folded(path) = &opts.output {
        // The whole merged tree: a flame graph needs every node.
        return outputs::stream_atomic(path, |out| outputs::folded::write_diff(&merged, out));
    }
    // The page draws every node too; the text lists the significant ones.
    let whole = matches!(opts.output, Output::Html(_)).then(|| merged.clone());
    let shown = diff::filter(merged, args.delta, min_size, true).expect("the root is always kept");
    let labels = Labels { left_name, right_name, left_source: &left.describe(), right_source: &right.describe() };
    match (&opts.output, whole) {
        (Output::Html(path), Some(whole)) => {
            let page = outputs::html::diff_page(&whole, &shown, metric, args.delta, min_size, &labels);
            outputs::stream_atomic(path, |out| outputs::html::write(&page, out))?;
            stdout.push_str(&format!("Diff report written to {}\n", path.display()));
        }
        (Output::Stdout, _) => stdout.push_str(&outputs::diff::render(&shown, metric, args.delta, min_size, &labels)),
        (Output::File(path), _) => {
            outputs::write_atomic(path, outputs::diff::render(&shown, metric, args.delta, min_size, &labels).as_bytes())?
        }
        _ => unreachable!("checked above"),
    }
    Ok(())
}
