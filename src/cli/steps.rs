//! `rtfprof steps`: the glue between the command line and [`crate::steps`].

use crate::error::{Error, Result};
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

/// Breaks each step down and writes the result where `--output` says. A
/// profile without steps is an error (one line, nothing on stdout).
pub fn run(stats: &Stats, opts: &Options, stdout: &mut String) -> Result<()> {
    let analyzed = steps::analyze(stats)?;
    if analyzed.rows.is_empty() {
        stdout.clear();
        let message = steps::no_steps_message(&analyzed);
        return Err(match stats.traces.as_slice() {
            [] => Error::Profile(message),
            [(_, trace)] => Error::input("--xplane_path", &trace.path, message),
            [(_, trace), ..] => Error::input("--xplane_path", trace.path.parent().unwrap_or(&trace.path), message),
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
