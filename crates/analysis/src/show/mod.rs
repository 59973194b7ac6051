//! Show: everything between a built view and its text — options, filters,
//! ordering, number formats and tfprof's text layout.

pub(crate) mod filter;
pub mod format;
pub(crate) mod list;
pub mod options;
pub(crate) mod order;
pub mod text;
pub mod tree;

use crate::error::{Error, Result};
use crate::stats::{Metrics, NodeId, Stats};
use crate::views::{self, View};
pub use options::Options;

/// A node as a view displayed it, with the numbers it showed: the structure
/// behind the text, for other outputs and the advisor.
#[derive(Clone, Debug, Default)]
pub struct Displayed {
    pub name: String,
    pub own: Metrics,
    pub totals: Metrics,
    /// Graph nodes counted in `totals` (tfprof's `total_definition_count`;
    /// 0 for op and code rows, which have none).
    pub definitions: i64,
    /// Whether `own` counts (accounted nodes print `own/total`, others `--/total`).
    pub accounted: bool,
    /// The graph nodes behind it: one for scope/graph nodes, a group for
    /// code/op nodes, none for synthetic ones.
    pub graph_nodes: Vec<NodeId>,
    /// Displayed children in display order (op view: the rows, flat).
    pub children: Vec<Displayed>,
    /// Index of the node in the view's tree (tree views) or group list (op).
    pub index: usize,
}

/// What one view command produced.
#[derive(Debug)]
pub struct ViewResult {
    /// tfprof's complete text (doc, `Profile:`, legend, lines).
    pub text: String,
    /// `_TFProfRoot` and everything displayed below it.
    pub root: Displayed,
}

/// Takes the text made so far, e.g. to write it out and clear it, so that a
/// large view's text need not be held whole.
pub type Flush<'a> = &'a mut dyn FnMut(&mut String) -> std::io::Result<()>;

/// Runs one view command and returns tfprof's complete text for it.
pub fn render(stats: &Stats, view: View, opts: &Options) -> Result<String> {
    run_kept(stats, view, opts, false).map(|(text, _)| text)
}

/// Runs one view command, whose options [`check`] accepted, and writes
/// tfprof's complete text for it to `out` as it is made: a tree view a
/// window of lines at a time, never the whole text at once.
pub fn write_checked(stats: &Stats, view: View, opts: &Options, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut flush = |text: &mut String| {
        out.write_all(text.as_bytes())?;
        text.clear();
        Ok(())
    };
    let (rest, _) = run_checked(stats, view, opts, false, &mut flush)?;
    out.write_all(rest.as_bytes())
}

/// Runs one view command.
pub fn run(stats: &Stats, view: View, opts: &Options) -> Result<ViewResult> {
    let (text, root) = run_kept(stats, view, opts, true)?;
    Ok(ViewResult { text, root: root.expect("asked for the tree") })
}

/// Checks the options, then runs the view keeping its whole text.
fn run_kept(stats: &Stats, view: View, opts: &Options, want_tree: bool) -> Result<(String, Option<Displayed>)> {
    check(stats, view, opts)?;
    Ok(run_checked(stats, view, opts, want_tree, &mut |_| Ok(())).expect("keeping the text cannot fail"))
}

/// The text (what `flush` did not take), and the displayed tree when
/// `want_tree` (building it costs a copy of every shown name). Only `flush`
/// fails.
fn run_checked(stats: &Stats, view: View, opts: &Options, want_tree: bool, flush: Flush) -> std::io::Result<(String, Option<Displayed>)> {
    let mut out = text::header(view, &opts.select, stats.miss_accelerator_stream);
    let mut show_tree = |tree: &views::Tree| -> std::io::Result<Option<Displayed>> {
        let shown = tree::TreeShow::new(stats, tree, opts, view);
        if want_tree {
            Ok(Some(shown.run(&mut out)))
        } else {
            shown.text(&mut out, flush)?;
            Ok(None)
        }
    };
    let root = match view {
        View::Scope | View::Graph => {
            let tree = if view == View::Scope { views::scope::build(stats) } else { views::graph::build(stats) };
            show_tree(&tree)?
        }
        View::Op => {
            let (body, root) = list::op_view(stats, &views::op::build(stats), opts);
            out.push_str(&body);
            Some(root)
        }
        View::Code => {
            let code = views::code::build(stats);
            if code.unaccounted_gradients > 0 {
                eprintln!("{} gradient nodes not accounted", code.unaccounted_gradients);
            }
            if opts.account_displayed_op_only {
                eprintln!("Note: code view ignores account_displayed_op_only");
            }
            if opts.select.has(options::Shown::TensorValue) {
                eprintln!("code view has no tensor value to show");
            }
            show_tree(&code.tree)?
        }
    };
    Ok((out, root))
}

/// Each node's values in every recorded step, indexed like
/// [`Displayed::index`]: a tree node's totals (its accounted subtree), an op
/// row's own values. Display filters do not apply, so a node displayed at the
/// chosen step has a value at every step.
#[derive(Debug)]
pub struct PerStep {
    pub steps: Vec<i64>,
    /// `values[i][index]`: the node's metrics at `steps[i]`.
    pub values: Vec<Vec<Metrics>>,
}

pub fn per_step(stats: &Stats, view: View, opts: &Options) -> PerStep {
    PerStep { steps: stats.steps.iter().copied().collect(), values: map_steps(stats, view, opts, |_, values| values) }
}

/// `take(step, values)` of each recorded step's values, as [`PerStep`] holds
/// them, in step order; the steps are accounted in parallel. Over many
/// steps, a caller that keeps a few metrics of a few nodes need not hold
/// every node's metrics at every step.
pub fn map_steps<T: Send>(stats: &Stats, view: View, opts: &Options, take: impl Fn(i64, Vec<Metrics>) -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    let steps: Vec<i64> = stats.steps.iter().copied().collect();
    match view {
        View::Op => {
            let groups = views::op::build(stats);
            steps
                .par_iter()
                .map(|&step| {
                    let mut values: Vec<Metrics> = Vec::with_capacity(groups.len() + 1);
                    let mut root = Metrics::default();
                    for group in &groups {
                        let snap = crate::stats::Snapshot::take(stats, &group.nodes, step, &opts.account_type_regexes);
                        root += snap.own;
                        values.push(snap.own);
                    }
                    // The root row (see list::op_view) comes after the groups.
                    values.push(root);
                    take(step, values)
                })
                .collect()
        }
        _ => {
            let tree = match view {
                View::Scope => views::scope::build(stats),
                View::Graph => views::graph::build(stats),
                _ => views::code::build(stats).tree,
            };
            steps
                .par_iter()
                .map(|&step| {
                    let at = Options { step, ..opts.clone() };
                    take(step, tree::TreeShow::new(stats, &tree, &at, view).account_totals())
                })
                .collect()
        }
    }
}

/// Whether `view` can be shown from `stats` with `opts`: the step must have
/// been recorded, and the code view needs code traces.
pub fn check(stats: &Stats, view: View, opts: &Options) -> Result<()> {
    if opts.step >= 0 && !stats.steps.contains(&opts.step) {
        let available: Vec<String> = stats.steps.iter().map(i64::to_string).collect();
        return Err(Error::Profile(format!("--step={}: step not found (available steps: {})", opts.step, available.join(" "))));
    }
    if view == View::Code && !stats.has_code_traces {
        return Err(Error::Profile("code view: no code traces (give --op_log_path with a tfprof_log written with add_trace=True)".into()));
    }
    Ok(())
}
