//! One view written where `--output` says: its text on stdout or in a
//! file, CSV or JSON, folded stacks, a pprof profile or a timeline. The
//! command line, the prompt and [`crate::api`] all write views through
//! [`write()`].

use crate::error::{Error, Result};
use crate::inputs::selection::Window;
use crate::load::Loaded;
use crate::outputs;
use crate::show::options::{Options, Output};
use crate::stats::Stats;
use crate::views::View;

/// Shows one view where `--output` says: its text on stdout or in a file, a
/// timeline, or a pprof profile. Needs a deep stack (see [`crate::stack::with_deep_stack`]).
///
/// Returns the line for stderr that says what a timeline's selection
/// (`--steps`, `--time_ms`, `--devices`, `--min_dur_us`) left out, if it
/// left out anything.
pub fn write(loaded: &Loaded, view: View, opts: &Options, stdout: &mut String) -> Result<Option<String>> {
    let stats = &loaded.stats;
    if let (Some(flag), false) = (opts.events.flags().first(), matches!(opts.output, Output::Timeline(_))) {
        return Err(selects_timelines_only(flag));
    }
    match &opts.output {
        Output::Timeline(path) => return write_timeline(loaded, view, opts, path, stdout),
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
    .map(|()| None)
}

/// The error for a selection flag (`--steps`, …) given to an output other
/// than a view's timeline.
pub fn selects_timelines_only(flag: &str) -> Error {
    Error::flag(flag, "selects the events of a trace's timeline (--output timeline:outfile=PATH) or of a cut ('rtfprof cut'), not of this output")
}

/// Folded stacks exist for the tree views whose nodes nest (scope and
/// code), with one time or bytes metric.
pub fn check_folded(view: View, opts: &Options) -> Result<crate::show::options::Shown> {
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
/// An XPlane trace's timeline is its own events, which `opts.events`
/// selects; other inputs' have no events to select.
fn write_timeline(loaded: &Loaded, view: View, opts: &Options, outfile: &std::path::Path, stdout: &mut String) -> Result<Option<String>> {
    use crate::outputs::timeline;
    let stats = &loaded.stats;
    let select = &opts.events;
    if loaded.xplane_traces().next().is_some() {
        // An XPlane trace: its own events, for the step asked for.
        crate::show::check(stats, view, opts)?;
        if let (Some(window), true) = (select.window, opts.step >= 0) {
            let flag = if matches!(window, Window::Steps(_)) { "--steps" } else { "--time_ms" };
            return Err(Error::flag(flag, "selects from the whole trace: give it or --step N, not both (--steps numbers the steps as 'rtfprof steps' does)"));
        }
        // Each trace's own steps, as `rtfprof steps` finds them.
        let step_spans: Vec<(i128, i128)> = match select.window {
            Some(Window::Steps(steps)) => {
                loaded.xplane_traces().map(|(_, trace)| crate::steps::cut::timeline_window(trace, steps).map(|w| w.span_ps)).collect::<Result<_>>()?
            }
            _ => Vec::new(),
        };
        let path = timeline::file_for_step(outfile, opts.step);
        let mut kept = timeline::Kept::default();
        timeline::write_file(&path, |w| {
            kept = timeline::write_xplane(loaded.xplane_traces(), opts.step, select, &step_spans, w)?.1;
            Ok(())
        })?;
        stdout.push_str(&timeline::written_message(&path));
        return Ok(kept.summary(select));
    }
    if let Some(flag) = select.flags().first() {
        let why = if loaded.pytorch_traces().next().is_some() {
            "selects a trace's events, and a PyTorch trace's timeline is its scope or code tree: to open some of its events in Perfetto, cut the trace (rtfprof cut --pytorch_path TRACE --steps A..B -o OUT.pt.trace.json.gz)"
        } else {
            "selects the events of a TF2 or JAX trace's timeline (--xplane_path); a RunMetadata timeline is one step's: give --step N"
        };
        return Err(Error::flag(*flag, why));
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
                timeline::write_file(&path, |w| timeline::write_graph(stats, &root, step, w).map(drop))?;
                stdout.push_str(&timeline::peak_memory_note(stats, &root, step));
                stdout.push_str(&timeline::written_message(&path));
            }
            Ok(None)
        }
        View::Scope | View::Code => {
            let root = crate::show::run(stats, view, opts)?.root;
            let path = timeline::file_for_step(outfile, opts.step);
            timeline::write_file(&path, |w| timeline::write_tree(&root, view.as_str(), w).map(drop))?;
            stdout.push_str(&timeline::written_message(&path));
            Ok(None)
        }
    }
}
