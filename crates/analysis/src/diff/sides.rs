//! The two sides of a diff, as the library takes them: each is TF files, a
//! trace (one host's or rank's file, or a directory's hosts or ranks as
//! jobs), partial profiles, or a saved tfprof text output, at a step. The
//! command line and the Python module build [`Side`]s from their flags or
//! keywords; [`compare`] loads both and merges their trees.

use std::path::PathBuf;

use super::{DiffNode, Metric, ValueTree};
use crate::error::{Error, Result};
use crate::inputs::{InputPaths, tfprof_text};
use crate::jobs::JobSpec;
use crate::load::{Purpose, Sources};
use crate::show::options::Output;
use crate::show::{self, Options};
use crate::stack::with_deep_stack;
use crate::views::View;

/// Which side, for the flags errors name (`--left_xplane_path`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Left,
    Right,
}

impl Which {
    /// The side's flag for one of its inputs: `flag("xplane_path")` is
    /// `--left_xplane_path` on the left.
    pub fn flag(self, input: &str) -> &'static str {
        const FLAGS: [(&str, &str, &str); 5] = [
            ("text", "--left_text", "--right_text"),
            ("graph_path", "--left_graph_path", "--right_graph_path"),
            ("xplane_path", "--left_xplane_path", "--right_xplane_path"),
            ("pytorch_path", "--left_pytorch_path", "--right_pytorch_path"),
            ("partial_path", "--left_partial_path", "--right_partial_path"),
        ];
        let (_, left, right) = FLAGS.iter().find(|(name, ..)| *name == input).expect("a side's input");
        if self == Which::Left { left } else { right }
    }
}

/// One side of a diff.
#[derive(Clone, Debug)]
pub enum Side {
    /// Profile inputs (TF files, or one trace file) at a step.
    Profile(Box<InputPaths>, i64),
    /// The hosts of an XPlane run directory, or the ranks of a directory of
    /// PyTorch traces, merged as jobs, at a step.
    Jobs(Vec<JobSpec>, i64),
    /// Partial profiles (files, or directories of `*.rtfprof` files),
    /// merged, at a step, and the flag that named them.
    Partials(Vec<PathBuf>, i64, &'static str),
    /// A saved tfprof output, and the flag that named it (for errors).
    Text(PathBuf, &'static str),
}

impl Side {
    /// A side from what was given for it: `sources` (TF files, a trace or
    /// partial profiles; not two of these) or `text`, a saved tfprof
    /// output. `estimate_flops`, `events_run` and `events_tags` of
    /// `sources.paths` apply to TF files and traces alike.
    pub fn new(sources: Sources, text: Option<PathBuf>, step: i64, which: Which) -> Result<Side> {
        let paths = &sources.paths;
        let files = loads_a_profile(paths) || paths.op_log_path.is_some();
        let trace = sources.xplane_path.is_some() || sources.pytorch_path.is_some();
        let partials = !sources.partial_paths.is_empty();
        if let Some(path) = text {
            if files || trace || partials {
                return Err(Error::flag(which.flag("text"), "a side is a saved text output or profile inputs, not both"));
            }
            return Ok(Side::Text(path, which.flag("text")));
        }
        if [files, trace, partials].iter().filter(|&&b| b).count() > 1 {
            let flag = if partials { which.flag("partial_path") } else { which.flag("xplane_path") };
            return Err(Error::flag(flag, "a side is one trace, TF files or partial profiles, not two of these"));
        }
        if partials {
            return Ok(Side::Partials(sources.partial_paths, step, which.flag("partial_path")));
        }
        if trace {
            return trace_side(sources, which, step);
        }
        let side = Side::Profile(Box::new(sources.paths), step);
        side.check_inputs(which)?;
        Ok(side)
    }

    /// Refuses a side of profile inputs that load no profile (none at all,
    /// or an op log alone, which only annotates a graph's nodes).
    pub fn check_inputs(&self, which: Which) -> Result<()> {
        match self {
            Side::Profile(paths, _) if !loads_a_profile(paths) => {
                Err(Error::flag(which.flag("graph_path"), "no inputs for this side (give profile files or --left_text/--right_text)"))
            }
            _ => Ok(()),
        }
    }

    /// The same inputs at another step (a saved text has no steps).
    pub fn at_step(&self, step: i64) -> Option<Side> {
        match self {
            Side::Profile(paths, _) => Some(Side::Profile(paths.clone(), step)),
            Side::Jobs(jobs, _) => Some(Side::Jobs(jobs.clone(), step)),
            Side::Partials(paths, _, flag) => Some(Side::Partials(paths.clone(), step, flag)),
            Side::Text(..) => None,
        }
    }

    /// Whether the side is a trace, which records no bytes per op.
    pub fn is_trace(&self) -> bool {
        match self {
            Side::Profile(paths, _) => paths.xplane_path.is_some() || paths.pytorch_path.is_some(),
            Side::Jobs(..) => true,
            Side::Partials(..) | Side::Text(..) => false,
        }
    }

    /// What the report calls the side: its file, hosts or partials, and step.
    pub fn describe(&self) -> String {
        let at = |what: String, step: i64| if step >= 0 { format!("{what} step {step}") } else { what };
        match self {
            Side::Text(path, _) => path.display().to_string(),
            Side::Jobs(jobs, step) => at(format!("hosts {}", jobs.iter().map(|job| job.name.as_str()).collect::<Vec<_>>().join(",")), *step),
            Side::Partials(paths, step, _) => at(paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(","), *step),
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
                at(source, *step)
            }
        }
    }

    /// The side's `view` as a tree of `metric` values.
    pub fn tree(&self, view: View, metric: Metric, opts: &Options) -> Result<ValueTree> {
        match self {
            Side::Text(path, flag) => {
                let text = std::fs::read_to_string(path).map_err(|source| Error::Io { kind: flag, path: path.clone(), source })?;
                if text.is_empty() {
                    return Err(Error::input(flag, path, "is empty"));
                }
                ValueTree::from_text(&tfprof_text::parse(&text, path)?, metric, path)
            }
            Side::Profile(paths, step) => view_tree(&load_side(paths, view)?, *step, view, metric, opts),
            Side::Jobs(jobs, step) => {
                let stats = crate::jobs::merge(crate::jobs::load(jobs, |paths| load_side(paths, view))?);
                view_tree(&stats, *step, view, metric, opts)
            }
            Side::Partials(paths, step, flag) => {
                let partial = crate::partial::read(paths).map_err(|e| named_by(e, flag))?;
                view_tree(&partial.into_loaded().stats, *step, view, metric, opts)
            }
        }
    }

    /// Whether two sides are the same inputs at the same step.
    fn same_as(&self, other: &Side) -> bool {
        match (self, other) {
            (Side::Profile(a, s), Side::Profile(b, t)) => a == b && s == t,
            (Side::Jobs(a, s), Side::Jobs(b, t)) => a.iter().map(|j| (&j.name, &j.inputs)).eq(b.iter().map(|j| (&j.name, &j.inputs))) && s == t,
            (Side::Partials(a, s, _), Side::Partials(b, t, _)) => a == b && s == t,
            _ => false,
        }
    }
}

/// Whether `paths` hold an input that makes a node model.
fn loads_a_profile(paths: &InputPaths) -> bool {
    paths.graph_path.is_some()
        || !paths.run_meta_paths.is_empty()
        || paths.profile_path.is_some()
        || paths.events_path.is_some()
        || paths.xplane_path.is_some()
        || paths.pytorch_path.is_some()
}

/// A side's trace (`--left_xplane_path`, `--right_pytorch_path`, …): one
/// host's or rank's file, or a directory's hosts or ranks as jobs.
fn trace_side(sources: Sources, which: Which, step: i64) -> Result<Side> {
    let flag = which.flag(if sources.xplane_path.is_some() { "xplane_path" } else { "pytorch_path" });
    let global = &sources.paths;
    let sources = Sources {
        paths: InputPaths {
            estimate_flops: global.estimate_flops,
            events_run: global.events_run.clone(),
            events_tags: global.events_tags.clone(),
            ..InputPaths::default()
        },
        ..sources
    };
    let resolved = crate::load::resolve(&sources, Purpose::Diff).map_err(|e| named_by(e, flag))?;
    Ok(if resolved.hosts.is_empty() { Side::Profile(Box::new(resolved.paths), step) } else { Side::Jobs(resolved.hosts, step) })
}

/// An error about a file, naming the side's flag (`--left_partial_path`)
/// where the reader named the global one.
fn named_by(error: Error, flag: &'static str) -> Error {
    match error {
        Error::Io { path, source, .. } => Error::Io { kind: flag, path, source },
        Error::Input { path, message, .. } => Error::Input { kind: flag, path, message },
        e => e,
    }
}

/// One side's inputs as the view needs them.
fn load_side(paths: &InputPaths, view: View) -> Result<crate::stats::Stats> {
    let paths = &InputPaths { skip_code_traces: view != View::Code, skip_attrs: !paths.estimate_flops.is_on(), ..paths.clone() };
    Ok(crate::load::load_paths(paths)?.stats)
}

fn view_tree(stats: &crate::stats::Stats, step: i64, view: View, metric: Metric, opts: &Options) -> Result<ValueTree> {
    let opts = Options { step, output: Output::None, ..opts.clone() };
    let root = with_deep_stack(|| show::run(stats, view, &opts))?.root;
    Ok(ValueTree::from_view(&root, metric))
}

/// Two sides loaded and merged by node name.
#[derive(Clone, Debug)]
pub struct Compared {
    /// Every node of either side.
    pub merged: DiffNode,
    pub metric: Metric,
    pub left_source: String,
    pub right_source: String,
}

impl Compared {
    /// The nodes the report lists: relative difference at least `delta` and
    /// size at least `min_size`, one side only, or with such descendants
    /// (the root always).
    pub fn listed(&self, delta: f64, min_size: i64) -> DiffNode {
        super::filter(self.merged.clone(), delta, min_size, true).expect("the root is always kept")
    }
}

/// The views a diff compares: the trees (scope, graph, code), not the op
/// list.
pub fn parse_view(name: &str) -> Result<View> {
    match name {
        "scope" => Ok(View::Scope),
        "graph" => Ok(View::Graph),
        "code" => Ok(View::Code),
        other => Err(Error::flag("--view", format!("'{other}' cannot be diffed (use scope, graph or code)"))),
    }
}

/// Loads both sides' `view` and merges them. `metric` defaults to micros
/// where a side is a trace (it records no bytes per op), else bytes. The
/// view options (`--account_type_regexes`, …) apply to both sides.
pub fn compare(left: &Side, right: &Side, view: View, metric: Option<Metric>, opts: &Options) -> Result<Compared> {
    if left.same_as(right) {
        return Err(Error::flag("diff", "both sides are the same inputs and step: give --right_* inputs or --left_step/--right_step"));
    }
    let metric = match metric {
        Some(metric) => metric,
        None if left.is_trace() || right.is_trace() => Metric::parse("micros")?,
        None => Metric::parse("bytes")?,
    };
    let (left_tree, right_tree) = (left.tree(view, metric, opts)?, right.tree(view, metric, opts)?);
    Ok(Compared { merged: super::merge(Some(&left_tree), Some(&right_tree)), metric, left_source: left.describe(), right_source: right.describe() })
}
