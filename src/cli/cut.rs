//! `rtfprof cut`: the steps (or time) asked for, written as a smaller
//! trace: a PyTorch trace's (`inputs::pytorch::cut`), or an XPlane trace's,
//! whose window the steps analysis finds (`steps::cut`) and the importer
//! writes (`inputs::xplane::cut`).

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::inputs::pytorch::cut::{Selection, Window};
use crate::inputs::selection::EventSelection;
use crate::inputs::step_range::StepRange;
use crate::inputs::xplane::XplaneFile;
use crate::load::Sources;

use super::args::CutArgs;

/// Cuts the trace of `sources` to `select` (the selection flags) into
/// `args.outfile`.
pub(super) fn run(sources: &Sources, args: &CutArgs, select: &EventSelection, stdout: &mut String) -> Result<()> {
    let (flag, path) = match (&sources.pytorch_path, &sources.xplane_path) {
        (Some(path), None) => ("--pytorch_path", path),
        (None, Some(path)) => ("--xplane_path", path),
        _ => return Err(Error::flag("cut", "needs one trace: --pytorch_path TRACE (PyTorch) or --xplane_path TRACE (TF2, JAX)")),
    };
    let mut others = sources.clone();
    (others.pytorch_path, others.xplane_path) = (None, None);
    if flag == "--xplane_path" {
        others.xplane_run = None;
    }
    if !others.is_empty() {
        return Err(Error::flag("cut", format!("cuts one trace: give {flag} TRACE and no other inputs")));
    }
    if flag == "--xplane_path" {
        return cut_xplane(sources, select, &args.outfile, stdout);
    }
    if path.is_dir() {
        return Err(Error::input(flag, path, "is a directory: cut reads one trace file (cut each rank's)"));
    }
    let selection = Selection::of(select.clone())?;
    let cut = write(&args.outfile, |out| crate::inputs::pytorch::cut::cut(path, &selection, out, &args.outfile))?;
    let what = match selection.window {
        Window::Time(time) => format!("{:.3}..{:.3} ms of the trace", time.start_ns as f64 / 1e6, time.end_ns as f64 / 1e6),
        Window::Steps(_) => cut.steps.iter().map(|n| format!("ProfilerStep#{n}")).collect::<Vec<_>>().join(", "),
    };
    let short = match (cut.too_short, select.min_dur_us()) {
        (0, _) | (_, None) => String::new(),
        (n, Some(us)) => format!("; {n} shorter than {us} us left out"),
    };
    stdout.push_str(&format!("{what} ({} of {} events{short}) written to {}\n", cut.kept_events, cut.total_events, args.outfile.display()));
    Ok(())
}

/// An XPlane trace's cut: one host's file (a run or log directory with one
/// host is that host's file), written plain.
fn cut_xplane(sources: &Sources, select: &EventSelection, outfile: &Path, stdout: &mut String) -> Result<()> {
    let Some(window) = select.window else { return Err(Error::flag("--steps", "cut needs --steps A..B or --time_ms A..B: what to keep")) };
    if outfile.to_string_lossy().ends_with(".gz") {
        return Err(Error::flag("-o", "an XPlane cut (--xplane_path) is written plain, as XProf reads it: name it NAME.xplane.pb"));
    }
    let (hosts, _) = crate::load::xplane_hosts(sources)?.expect("--xplane_path was given");
    let path = match hosts.as_slice() {
        [(_, path)] => path,
        _ => {
            let dir = sources.xplane_path.as_deref().unwrap_or(Path::new(""));
            let names: Vec<&str> = hosts.iter().map(|(host, _)| host.as_str()).collect();
            return Err(Error::input(
                "--xplane_path",
                dir,
                format!("holds {} hosts' traces ({}): cut reads one host's file (cut each)", hosts.len(), names.join(", ")),
            ));
        }
    };
    let file = XplaneFile::open(path)?;
    let (span_ps, roots, what) = match window {
        Window::Steps(steps) => xplane_steps(&file, steps)?,
        Window::Time(time) => {
            let origin = crate::inputs::xplane::cut::first_event_ps(&file)?.unwrap_or_default();
            let span = (origin + i128::from(time.start_ns) * 1000, origin + i128::from(time.end_ns) * 1000);
            (span, false, format!("{:.3}..{:.3} ms of the trace", time.start_ns as f64 / 1e6, time.end_ns as f64 / 1e6))
        }
    };
    let min_dur_ps = select.min_dur_ns.map(|ns| i128::from(ns) * 1000);
    let keep = crate::inputs::xplane::cut::Keep { window: span_ps, roots, devices: select.devices.as_deref(), min_dur_ps };
    let cut = write(outfile, |out| crate::inputs::xplane::cut::cut(&file, keep, out, outfile))?;
    let mut left_out = Vec::new();
    if let (n @ 1.., Some(devices)) = (cut.other_devices, select.devices_text()) {
        left_out.push(format!("{n} on devices other than {devices}"));
    }
    if let (n @ 1.., Some(us)) = (cut.too_short, select.min_dur_us()) {
        left_out.push(format!("{n} shorter than {us} us"));
    }
    let left_out = if left_out.is_empty() { String::new() } else { format!("; {} left out", left_out.join(", ")) };
    stdout.push_str(&format!("{what} ({} of {} events{left_out}) written to {}\n", cut.kept_events, cut.total_events, outfile.display()));
    Ok(())
}

/// The window of an XPlane trace's steps (`rtfprof steps`' numbers),
/// whether roots are kept for their numbering, and what the line says.
fn xplane_steps(file: &XplaneFile, steps: StepRange) -> Result<((i128, i128), bool, String)> {
    let window = crate::steps::cut::window(file, steps)?;
    let margin = match window.margin.as_slice() {
        [before, after] => format!(", with {before} and {after} around them (XProf drops a trace's first and last step)"),
        _ => String::new(),
    };
    let steps = match window.steps.as_slice() {
        [one] => format!("step {one}"),
        [first, .., last] => format!("steps {first} to {last}"),
        [] => String::new(),
    };
    Ok((window.span_ps, window.by_group, format!("{steps}{margin}")))
}

/// Writes `outfile` with `cut`, whose own error (a bad trace) is kept apart
/// from the file's; no file is left when either fails.
fn write<T>(outfile: &Path, cut: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
    let mut failed = None;
    let mut done = None;
    let written = crate::outputs::timeline::write_file(outfile, |out| match cut(out) {
        Ok(cut) => {
            done = Some(cut);
            Ok(())
        }
        Err(e) => {
            failed = Some(e);
            Err(std::io::Error::other("the cut failed"))
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    written?;
    Ok(done.expect("the cut ran"))
}
