//! `rtfprof steps`: the glue between the command line and [`crate::steps`].

use std::path::PathBuf;

use crate::error::Result;
use crate::inputs::pytorch::windows::Windowing;
use crate::load::Loaded;
use crate::outputs;
use crate::show::options::Options;
use crate::steps;

/// Breaks each step of a loaded profile down and writes it where
/// `--output` says.
pub fn run(loaded: &Loaded, opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::with_rows(steps::analyze(loaded)?, &[]).inspect_err(|_| stdout.clear())?;
    outputs::emit(&analyzed, &opts.output, stdout)
}

/// Breaks each step of XPlane traces down, one file a host (see
/// [`steps::analyze_xplane`]), and writes it.
pub fn run_xplane(hosts: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze_xplane(hosts).inspect_err(|_| stdout.clear())?;
    outputs::emit(&analyzed, &opts.output, stdout)
}

/// [`run_xplane`] for a capture: its traces are saved whatever they hold,
/// so a trace with no step is said on stderr (why, as `steps` says it), not
/// an error.
pub fn run_captured(hosts: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze_xplane_found(hosts)?;
    if analyzed.is_empty() {
        let run = hosts.first().and_then(|(_, path)| path.parent()).unwrap_or(std::path::Path::new("the capture"));
        super::term::warning(&format!("{}: {}", run.display(), steps::no_steps_message(&analyzed)));
        return Ok(());
    }
    outputs::emit(&analyzed, &opts.output, stdout)
}

/// Breaks each step of PyTorch traces down, one a rank (see
/// [`steps::analyze_pytorch`]), and writes it.
pub fn run_pytorch(ranks: &[(String, PathBuf)], windowing: Windowing, opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze_pytorch(ranks, windowing).inspect_err(|_| stdout.clear())?;
    outputs::emit(&analyzed, &opts.output, stdout)
}
