//! `rtfprof ranks`: the glue between the command line and [`crate::ranks`].

use crate::error::Result;
use crate::load::Sources;
use crate::outputs;
use crate::show::options::Options;

/// Reads the ranks and writes them where `--output` says.
pub fn run(sources: &Sources, opts: &Options, stdout: &mut String) -> Result<()> {
    let (ranks, note) = crate::ranks::from_sources(sources)?;
    if let Some(note) = note {
        stdout.push_str(&note);
        stdout.push('\n');
    }
    outputs::emit(&ranks, &opts.output, stdout)
}
