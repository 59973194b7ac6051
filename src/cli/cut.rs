//! `rtfprof cut`: the steps asked for, written as a smaller trace.

use crate::error::{Error, Result};
use crate::inputs::pytorch::cut::{StepRange, cut};
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
    let steps = StepRange::parse(&args.steps)?;
    // The cut's own error (a bad trace) is kept apart from the file's.
    let mut failed = None;
    let mut done = None;
    let written = crate::outputs::timeline::write_file(&args.outfile, |out| match cut(path, steps, out, &args.outfile) {
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
    let steps: Vec<String> = cut.steps.iter().map(|n| format!("ProfilerStep#{n}")).collect();
    stdout.push_str(&format!("{} ({} of {} events) written to {}\n", steps.join(", "), cut.kept_events, cut.total_events, args.outfile.display()));
    Ok(())
}
