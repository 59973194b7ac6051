//! `rtfprof diff`: the two sides from the `--left_*`/`--right_*` flags
//! (defaulting to the global inputs), compared by [`crate::diff::sides`]
//! and written where `--output` says.

use std::path::PathBuf;

use super::DiffArgs;
use crate::diff::sides::{self, Side, Which};
use crate::diff::{self, Metric};
use crate::error::{Error, Result};
use crate::inputs::InputPaths;
use crate::jobs::JobSpec;
use crate::outputs;
use crate::outputs::diff::{DiffReport, Labels};
use crate::show::Options;
use crate::show::options::Output;

/// The side the `--left_*` (or `--right_*`) flags and `--left_text` (or
/// `--right_text`) give, or `None` when none was given (the side is then
/// the global inputs). `global` gives the reading options
/// (`--estimate_flops`, `--events_run`, `--events_tags`).
fn flag_side(args: &DiffArgs, which: Which, step: i64, global: &InputPaths) -> Result<Option<Side>> {
    let left = which == Which::Left;
    let sources = args.sides.sources(left, global);
    let text = if left { &args.left_text } else { &args.right_text };
    // (An empty --left_run_meta_path still names the side.)
    let run_meta = if left { &args.sides.left_run_meta_path } else { &args.sides.right_run_meta_path };
    if sources.is_empty() && text.is_none() && run_meta.is_none() {
        return Ok(None);
    }
    Side::new(sources, text.clone(), step, which).map(Some)
}

/// `global` is the global input flags (the default of both sides), with
/// `--xplane_path` resolved: to its one host's file in `global`, or to
/// `global_hosts`, one job a host; `global_partials` are `--partial_path`'s.
pub fn run(args: &DiffArgs, global: &InputPaths, global_hosts: &[JobSpec], global_partials: &[PathBuf], opts: &Options, stdout: &mut String) -> Result<()> {
    let view = sides::parse_view(&args.view)?;
    if args.delta.is_nan() || args.delta < 0.0 {
        return Err(Error::flag("--delta", "must be a number >= 0"));
    }
    let min_size = diff::parse_size(&args.min_size)?;
    let names: Vec<&str> = args.names.split(',').collect();
    let [left_name, right_name] = names[..] else {
        return Err(Error::flag("--names", "give two names separated by a comma, e.g. bs32,bs64"));
    };

    let (left_step, right_step) = (args.left_step.unwrap_or(opts.step), args.right_step.unwrap_or(opts.step));
    let global_side = |step| {
        if !global_partials.is_empty() {
            return Side::Partials(global_partials.to_vec(), step, "--partial_path");
        }
        match global_hosts {
            [] => Side::Profile(Box::new(global.clone()), step),
            hosts => Side::Jobs(hosts.to_vec(), step),
        }
    };
    let left = flag_side(args, Which::Left, left_step, global)?.unwrap_or_else(|| global_side(left_step));
    // Without right-side inputs, the right side is the left's at --right_step.
    let right = match flag_side(args, Which::Right, right_step, global)? {
        Some(side) => side,
        None => left.at_step(right_step).unwrap_or_else(|| global_side(right_step)),
    };
    let metric = args.metric.as_deref().map(Metric::parse).transpose()?;
    // (A global side is not checked by Side::new.)
    left.check_inputs(Which::Left)?;
    right.check_inputs(Which::Right)?;
    if !matches!(opts.output, Output::Stdout | Output::File(_) | Output::Json(_) | Output::Folded(_) | Output::Html(_)) {
        return Err(Error::flag("--output", "diff writes text (stdout, file:outfile=PATH), json:outfile=PATH, folded:outfile=PATH or html:outfile=PATH"));
    }
    let compared = sides::compare(&left, &right, view, metric, opts)?;
    let metric = compared.metric;
    if let Output::Folded(path) = &opts.output {
        // The whole merged tree: a flame graph needs every node.
        return outputs::stream_atomic(path, |out| outputs::folded::write_diff(&compared.merged, out));
    }
    let listed = compared.listed(args.delta, min_size);
    let labels = Labels { left_name, right_name, left_source: &compared.left_source, right_source: &compared.right_source };
    if let Output::Html(path) = &opts.output {
        // The page draws every node; the text lists the significant ones.
        let page = outputs::html::diff_page(&compared.merged, &listed, metric, args.delta, min_size, &labels);
        outputs::stream_atomic(path, |out| outputs::html::write(&page, out))?;
        stdout.push_str(&format!("Diff report written to {}\n", path.display()));
        return Ok(());
    }
    let report = DiffReport { listed: &listed, view, metric, delta: args.delta, min_size, labels: &labels };
    outputs::emit(&report, &opts.output, stdout)
}
