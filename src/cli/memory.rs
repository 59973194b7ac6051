//! `rtfprof memory`: the glue between the command line and [`crate::memory`].

use crate::error::{Error, Result};
use crate::inputs::Kind;
use crate::load::Loaded;
use crate::memory;
use crate::outputs;
use crate::show::options::{Options, Output};

/// The outputs `memory` writes: its text (stdout, a file) or its JSON.
pub fn check_output(opts: &Options) -> Result<()> {
    match opts.output {
        Output::Stdout | Output::None | Output::File(_) | Output::Json(_) => Ok(()),
        _ => Err(Error::flag("--output", format!("memory writes text (stdout, file:outfile=PATH) or json:outfile=PATH, not {}", opts.output))),
    }
}

/// Analyzes the steps `--step` names and writes the result where `--output`
/// says.
pub fn run(loaded: &Loaded, opts: &Options, stdout: &mut String) -> Result<()> {
    let stats = &loaded.stats;
    let profile = memory::analyze(loaded, opts.step)?;
    match &opts.output {
        Output::Json(path) => outputs::stream_atomic(path, |out| memory::json::write(&profile, out)),
        output => {
            let mut text = memory::text::render(&profile, opts);
            if stats.allocations.is_empty() {
                text.push_str(no_records_note(loaded));
                text.push('\n');
            }
            text.push_str(&memory::text::render_programs(&profile.programs, !stats.allocations.is_empty(), opts));
            match output {
                Output::File(path) => outputs::write_atomic(path, text.as_bytes()),
                Output::None => Ok(()),
                _ => {
                    stdout.push_str(&text);
                    Ok(())
                }
            }
        }
    }
}

/// Why there is nothing to replay, by kind of input.
pub(crate) fn no_records_note(loaded: &Loaded) -> &'static str {
    if loaded.kinds == [Kind::Profile] {
        "No allocation records: a ProfileProto keeps only those of GPU allocators (tfprof drops the others); the RunMetadata files have them all."
    } else if loaded.from_traces() {
        "No allocation records: the trace has no MemoryAllocation/MemoryDeallocation events (TensorFlow records them for GPU allocators)."
    } else {
        "No allocation records in the inputs (RunMetadata has them when traced with FULL_TRACE)."
    }
}
