//! `rtfprof ranks`: the glue between the command line and [`crate::ranks`].

use crate::error::{Error, Result};
use crate::load::{self, Sources};
use crate::outputs;
use crate::ranks::render;
use crate::show::options::{Options, Output};

/// The outputs `ranks` writes: its text (stdout, a file), JSON or CSV.
pub fn check_output(opts: &Options) -> Result<()> {
    match opts.output {
        Output::Stdout | Output::None | Output::File(_) | Output::Json(_) | Output::Csv(_) => Ok(()),
        _ => Err(Error::flag(
            "--output",
            format!("ranks writes text (stdout, file:outfile=PATH), json:outfile=PATH or csv:outfile=PATH, not {}", opts.output),
        )),
    }
}

/// Reads the ranks and writes them where `--output` says.
pub fn run(sources: &Sources, opts: &Options, stdout: &mut String) -> Result<()> {
    let (ranks, note) = load::ranks(sources)?;
    if let Some(note) = note {
        stdout.push_str(&note);
        stdout.push('\n');
    }
    match &opts.output {
        Output::Json(path) => outputs::stream_atomic(path, |out| render::write_json(&ranks, out)),
        Output::Csv(path) => outputs::stream_atomic(path, |out| render::write_csv(&ranks, out)),
        Output::File(path) => outputs::write_atomic(path, render::render_text(&ranks).as_bytes()),
        Output::None => Ok(()),
        _ => {
            stdout.push_str(&render::render_text(&ranks));
            Ok(())
        }
    }
}
