//! `rtfprof cut`: the steps or time asked for, written as a smaller trace.

use crate::error::{Error, Result};
use crate::inputs::pytorch::cut::{Selection, Window, cut};
use crate::load::Sources;

use super::args::CutArgs;

pub(super) fn run(sources: &Sources, args: &CutArgs, stdout: &mut String) -> Result<()> {
    let Some(path) = &sources.pytorch_path else {
        return Err(Error::flag("cut", "needs --pytorch_path TRACE (a PyTorch trace; XPlane traces are not cut yet)"));
    };
    let mut others = sources.clone();
    others.pytorch_path = None;
    if !others.is_empty() {
        return Err(Error::flag("cut", "cuts one PyTorch trace: give --pytorch_path TRACE and no other inputs"));
    }
    if path.is_dir() {
        return Err(Error::input("--pytorch_path", path, "is a directory: cut reads one trace file (cut each rank's)"));
    }
    let selection = Selection::parse(args.steps.as_deref(), args.time_ms.as_deref(), args.devices.as_deref(), args.min_dur_us.as_deref())?;
    // The cut's own error (a bad trace) is kept apart from the file's.
    let mut failed = None;
    let mut done = None;
    let written = crate::outputs::timeline::write_file(&args.outfile, |out| match cut(path, &selection, out, &args.outfile) {
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
    let cut = done.expect("the cut ran");
    let what = match selection.window {
        Window::Time(time) => format!("{:.3}..{:.3} ms of the trace", time.start_ns as f64 / 1e6, time.end_ns as f64 / 1e6),
        Window::Steps(_) => cut.steps.iter().map(|n| format!("ProfilerStep#{n}")).collect::<Vec<_>>().join(", "),
    };
    let short = match (cut.too_short, &args.min_dur_us) {
        (0, _) | (_, None) => String::new(),
        (n, Some(us)) => format!("; {n} shorter than {us} us left out"),
    };
    stdout.push_str(&format!("{what} ({} of {} events{short}) written to {}\n", cut.kept_events, cut.total_events, args.outfile.display()));
    Ok(())
}
