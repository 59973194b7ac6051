//! `rtfprof memory`: the glue between the command line and [`crate::memory`].

use crate::error::Result;
use crate::load::Loaded;
use crate::memory;
use crate::outputs::{self, memory::MemoryReport};
use crate::show::options::Options;

/// Analyzes the steps `--step` names and writes the result where `--output`
/// says.
pub fn run(loaded: &Loaded, opts: &Options, stdout: &mut String) -> Result<()> {
    let profile = memory::analyze(loaded, opts.step)?;
    let no_records = loaded.stats.allocations.is_empty().then(|| memory::no_records_note(loaded));
    outputs::emit(&MemoryReport { profile: &profile, opts, no_records }, &opts.output, stdout)
}

/// Writes a profile read a window of steps at a time
/// ([`memory::pytorch_windowed`]) as [`run`] writes a loaded one.
pub fn write_windowed(profile: &memory::MemoryProfile, any_records: bool, opts: &Options, stdout: &mut String) -> Result<()> {
    let no_records = (!any_records).then_some(memory::NO_TRACE_RECORDS);
    outputs::emit(&MemoryReport { profile, opts, no_records }, &opts.output, stdout)
}
