//! `rtfprof steps`: the glue between the command line and [`crate::steps`].

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::load::Loaded;
use crate::outputs;
use crate::show::options::{Options, Output};
use crate::steps;

/// The outputs `steps` writes: its text (stdout, a file), JSON or CSV.
pub fn check_output(opts: &Options) -> Result<()> {
    match opts.output {
        Output::Stdout | Output::None | Output::File(_) | Output::Json(_) | Output::Csv(_) => Ok(()),
        _ => Err(Error::flag(
            "--output",
            format!("steps writes text (stdout, file:outfile=PATH), json:outfile=PATH or csv:outfile=PATH, not {}", opts.output),
        )),
    }
}

/// Breaks each step of a loaded profile down (see [`write`]).
pub fn run(loaded: &Loaded, opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::with_rows(steps::analyze(loaded)?, &[]).inspect_err(|_| stdout.clear())?;
    write(analyzed, opts, stdout)
}

/// Breaks each step of XPlane traces down, one file a host (see
/// [`steps::analyze_xplane`]), and writes it (see [`write`]).
pub fn run_xplane(hosts: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze_xplane(hosts).inspect_err(|_| stdout.clear())?;
    write(analyzed, opts, stdout)
}

/// Breaks each step of PyTorch traces down, one a rank (see
/// [`steps::analyze_pytorch`]), and writes it (see [`write`]).
pub fn run_pytorch(ranks: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze_pytorch(ranks).inspect_err(|_| stdout.clear())?;
    write(analyzed, opts, stdout)
}

/// Writes the breakdown where `--output` says.
fn write(analyzed: steps::Steps, opts: &Options, stdout: &mut String) -> Result<()> {
    match &opts.output {
        Output::Json(path) => outputs::stream_atomic(path, |out| steps::write_json(&analyzed, out)),
        Output::Csv(path) => outputs::stream_atomic(path, |out| steps::write_csv(&analyzed, out)),
        Output::File(path) => outputs::write_atomic(path, steps::render_text(&analyzed).as_bytes()),
        Output::None => Ok(()),
        _ => {
            stdout.push_str(&steps::render_text(&analyzed));
            Ok(())
        }
    }
}
