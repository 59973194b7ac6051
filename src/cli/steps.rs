//! `rtfprof steps`: the glue between the command line and [`crate::steps`].

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::inputs::xplane::XplaneFile;
use crate::outputs;
use crate::show::options::{Options, Output};
use crate::stats::Stats;
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

/// Breaks each step of a profile's run metadata down (see [`write`]).
pub fn run(stats: &Stats, opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = with_rows(steps::analyze(stats)?, &[]).inspect_err(|_| stdout.clear())?;
    write(analyzed, opts, stdout)
}

/// Breaks each step of XPlane traces down, one file a host (see
/// [`analyze_xplane`]), and writes it (see [`write`]).
pub fn run_xplane(hosts: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = analyze_xplane(hosts).inspect_err(|_| stdout.clear())?;
    write(analyzed, opts, stdout)
}

/// The steps of XPlane traces, one file a host: read in place, without
/// loading them into nodes (the views' conversion is not needed). No step
/// is an error naming the trace (its run directory for several hosts).
pub fn analyze_xplane(hosts: &[(String, PathBuf)]) -> Result<steps::Steps> {
    let files = hosts.iter().map(|(_, path)| XplaneFile::open(path)).collect::<Result<Vec<_>>>()?;
    for file in &files {
        file.check()?;
    }
    let analyzed = steps::analyze_files(&files)?;
    let paths: Vec<PathBuf> = files.into_iter().map(|f| f.path).collect();
    with_rows(analyzed, &paths)
}

/// `analyzed`, unless it has no step: then an error, one line naming the
/// trace (the run directory of several).
pub fn with_rows(analyzed: steps::Steps, traces: &[PathBuf]) -> Result<steps::Steps> {
    if !analyzed.rows.is_empty() {
        return Ok(analyzed);
    }
    let message = steps::no_steps_message(&analyzed);
    Err(match traces {
        [] => Error::Profile(message),
        [trace] => Error::input("--xplane_path", trace, message),
        [trace, ..] => Error::input("--xplane_path", trace.parent().unwrap_or(trace), message),
    })
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
