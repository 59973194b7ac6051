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
    write(steps::analyze(stats)?, &[], opts, stdout)
}

/// Breaks each step of XPlane traces down, one file a host: read in place,
/// without loading them into nodes (the views' conversion is not needed).
pub fn run_xplane(hosts: &[(String, PathBuf)], opts: &Options, stdout: &mut String) -> Result<()> {
    let files = hosts.iter().map(|(_, path)| XplaneFile::open(path)).collect::<Result<Vec<_>>>()?;
    for file in &files {
        check_xspace(file)?;
    }
    let analyzed = steps::analyze_files(&files)?;
    let paths: Vec<PathBuf> = files.into_iter().map(|f| f.path).collect();
    write(analyzed, &paths, opts, stdout)
}

/// An empty file, or one without planes, is no trace (as the views say).
fn check_xspace(file: &XplaneFile) -> Result<()> {
    if file.bytes.is_empty() {
        return Err(Error::input("--xplane_path", &file.path, "is empty"));
    }
    let planes = crate::inputs::xplane::decode::Space::decode(&file.bytes)
        .map_err(|e| Error::input("--xplane_path", &file.path, format!("not an XSpace trace ({})", crate::error::one_line(&e.to_string()))))?
        .planes;
    if planes.is_empty() {
        return Err(Error::input("--xplane_path", &file.path, "not an XSpace trace (no planes)"));
    }
    Ok(())
}

/// Writes the breakdown where `--output` says. A profile without steps is
/// an error (one line naming the trace, nothing on stdout).
fn write(analyzed: steps::Steps, traces: &[PathBuf], opts: &Options, stdout: &mut String) -> Result<()> {
    if analyzed.rows.is_empty() {
        stdout.clear();
        let message = steps::no_steps_message(&analyzed);
        return Err(match traces {
            [] => Error::Profile(message),
            [trace] => Error::input("--xplane_path", trace, message),
            [trace, ..] => Error::input("--xplane_path", trace.parent().unwrap_or(trace), message),
        });
    }
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
